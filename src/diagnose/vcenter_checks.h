#pragma once
// diagnose, second group: each configured vCenter, step by step (DNS, TCP, TLS, credentials,
// login, API version, datacenters, sessions). The I/O side (vcenter_probe.h) gathers the facts
// and stops at the first step that fails; this file turns them into report lines with the fix in
// words. Pure.

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "cloud/config/config.h"
#include "diagnose/report.h"

namespace ccm::diagnose {

enum class Component { kCpi, kCsi };

// A configured datacenter, as vsphere::SelectDatacenter resolves it (as the components do).
struct DatacenterMatch {
  std::string spec;  // as configured
  absl::Status status;
  std::string path;  // inventory path when found
};

// What one vCenter answered. A step that was not reached keeps its nullopt.
struct VcenterFacts {
  std::optional<absl::Status> dns;
  std::vector<std::string> addresses;  // what the server name resolved to
  std::optional<absl::Status> tcp;
  // TLS as configured (CA, thumbprint, system CAs). server_thumbprint is the SHA-1 of the
  // certificate the server presented (read without verification), "" when unknown.
  std::optional<absl::Status> tls;
  std::string server_thumbprint;
  std::optional<absl::Status> credentials;  // the configured source gave a user and password
  std::string user;
  std::optional<absl::Status> login;
  std::string api_version;                          // about.apiVersion, "7.0.3.0"
  std::string full_name;                            // about.fullName
  std::optional<absl::Status> datacenters;          // listing them
  std::vector<std::string> datacenter_paths;        // every datacenter's inventory path
  std::vector<DatacenterMatch> datacenter_matches;  // one per configured datacenter
  std::optional<absl::Status> sessions;             // reading SessionManager.sessionList
  int user_sessions = 0;                            // sessions of `user`
  int all_sessions = 0;
};

// Sessions of one user above which the report warns (a client that does not log out leaks
// them; vCenter refuses logins past its limit, 2,000 by default).
inline constexpr int kSessionWarnThreshold = 50;

void JudgeVcenter(const cloud::VirtualCenterConfig& vc, const VcenterFacts& facts,
                  Component component, Report& report);

// "7.0.3.0" >= "6.7.3"? Compares dot-separated numbers; a missing part is 0.
bool VersionAtLeast(const std::string& version, const std::string& minimum);

}  // namespace ccm::diagnose
