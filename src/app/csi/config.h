#pragma once
// csi-vsphere.conf, read the same way by the controller, the node plugin and the syncer.

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "cloud/config/config.h"

namespace ccm::app {

// Reads and parses csi-vsphere.conf (the same formats as vsphere.conf). Errors name the file.
// The node plugin passes `credentials_required` false: it never logs in to vCenter.
absl::StatusOr<cloud::ParseResult> ReadCsiConfig(const std::string& path,
                                                 const std::map<std::string, std::string>& env,
                                                 bool credentials_required = true);

// The parse of ReadCsiConfig on bytes already read (the config watch re-reads the file).
absl::StatusOr<cloud::ParseResult> ParseCsiConfigBytes(
    const std::string& bytes, const std::string& path,
    const std::map<std::string, std::string>& env, bool credentials_required = true);

}  // namespace ccm::app
