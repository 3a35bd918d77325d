#pragma once
// An in-memory self-signed serving certificate, as the Go cloud-controller-manager makes one when
// no --tls-cert-file is given (for the host name, "localhost" and 127.0.0.1).

#include <openssl/evp.h>
#include <openssl/x509.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace ccm::app {

struct KeyPair {
  std::unique_ptr<X509, decltype(&X509_free)> cert{nullptr, X509_free};
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key{nullptr, EVP_PKEY_free};
  std::string cert_pem;
};

absl::StatusOr<KeyPair> MakeSelfSigned(const std::string& host);
absl::StatusOr<KeyPair> LoadKeyPair(const std::string& cert_file, const std::string& key_file);

}  // namespace ccm::app
