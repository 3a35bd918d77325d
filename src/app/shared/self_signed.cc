#include "app/shared/self_signed.h"

#include <openssl/bio.h>
#include <openssl/ec.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <cstdio>

#include "absl/strings/str_cat.h"

namespace ccm::app {
namespace {

bool AddExt(X509* cert, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (ext == nullptr) return false;
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
  return true;
}

}  // namespace

absl::StatusOr<KeyPair> MakeSelfSigned(const std::string& host) {
  KeyPair kp;
  kp.key.reset(EVP_EC_gen("P-256"));
  if (!kp.key) return absl::InternalError("self-signed certificate: key generation failed");
  kp.cert.reset(X509_new());
  X509* c = kp.cert.get();
  X509_set_version(c, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(c), static_cast<long>(time(nullptr)));
  X509_gmtime_adj(X509_getm_notBefore(c), -3600);
  X509_gmtime_adj(X509_getm_notAfter(c), 365L * 24 * 3600);
  X509_set_pubkey(c, kp.key.get());
  X509_NAME* name = X509_get_subject_name(c);
  std::string cn = absl::StrCat(host, "@", time(nullptr));
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509_set_issuer_name(c, name);
  std::string san = "DNS:localhost,IP:127.0.0.1";
  if (!host.empty() && host != "localhost") san = absl::StrCat("DNS:", host, ",", san);
  if (!AddExt(c, NID_subject_alt_name, san) ||
      !AddExt(c, NID_basic_constraints, "critical,CA:FALSE") ||
      !AddExt(c, NID_ext_key_usage, "serverAuth"))
    return absl::InternalError("self-signed certificate: extensions failed");
  if (!X509_sign(c, kp.key.get(), EVP_sha256()))
    return absl::InternalError("self-signed certificate: signing failed");
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(bio, c);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  kp.cert_pem.assign(data, n);
  BIO_free(bio);
  return kp;
}

absl::StatusOr<KeyPair> LoadKeyPair(const std::string& cert_file, const std::string& key_file) {
  KeyPair kp;
  FILE* f = fopen(cert_file.c_str(), "r");
  if (f == nullptr)
    return absl::NotFoundError(absl::StrCat("--tls-cert-file ", cert_file, ": cannot open"));
  kp.cert.reset(PEM_read_X509(f, nullptr, nullptr, nullptr));
  fclose(f);
  if (!kp.cert)
    return absl::InvalidArgumentError(
        absl::StrCat("--tls-cert-file ", cert_file, ": not a PEM certificate"));
  f = fopen(key_file.c_str(), "r");
  if (f == nullptr)
    return absl::NotFoundError(absl::StrCat("--tls-private-key-file ", key_file, ": cannot open"));
  kp.key.reset(PEM_read_PrivateKey(f, nullptr, nullptr, nullptr));
  fclose(f);
  if (!kp.key)
    return absl::InvalidArgumentError(
        absl::StrCat("--tls-private-key-file ", key_file, ": not a PEM private key"));
  if (X509_check_private_key(kp.cert.get(), kp.key.get()) != 1)
    return absl::InvalidArgumentError("--tls-private-key-file does not match --tls-cert-file");
  return kp;
}

}  // namespace ccm::app
