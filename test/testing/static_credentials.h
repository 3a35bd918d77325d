#pragma once

#include <utility>

#include "vsphere/credential_source.h"

namespace ccm::vsphere {

// Fixed credentials (inline user/password in vsphere.conf, and tests).
class StaticCredentialSource final : public CredentialSource {
 public:
  explicit StaticCredentialSource(Credentials c) : c_(std::move(c)) {}
  absl::StatusOr<Credentials> Get(absl::string_view) const override { return c_; }
  uint64_t generation() const override { return 1; }

 private:
  Credentials c_;
};

}  // namespace ccm::vsphere
