#include "app/csi/config.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "app/csi/options.h"
#include "csi/controller/controller_backend.h"

namespace ccm::app {

absl::StatusOr<cloud::ParseResult> ReadCsiConfig(const std::string& path,
                                                 const std::map<std::string, std::string>& env,
                                                 bool credentials_required) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::FailedPreconditionError(absl::StrCat("cannot read CSI config ", path, ": ",
                                                      std::strerror(errno), " (set ", kEnvCsiConfig,
                                                      " to its path)"));
  }
  std::stringstream bytes;
  bytes << in.rdbuf();
  return ParseCsiConfigBytes(bytes.str(), path, env, credentials_required);
}

absl::StatusOr<cloud::ParseResult> ParseCsiConfigBytes(
    const std::string& bytes, const std::string& path,
    const std::map<std::string, std::string>& env, bool credentials_required) {
  cloud::ParseOptions po;
  po.file_name = path;
  po.credentials_required = credentials_required;
  po.kube_secrets =
      false;  // the reference CSI driver ignores secret-name: so do we, with a warning
  absl::StatusOr<cloud::ParseResult> r = cloud::ParseConfig(bytes, env, po);
  if (!r.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid CSI config ", path, ": ", r.status().message()));
  }
  if (absl::Status s = csi::CheckVCenterLimits(r->config); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("invalid CSI config ", path, ": ", s.message()));
  }
  return r;
}

}  // namespace ccm::app
