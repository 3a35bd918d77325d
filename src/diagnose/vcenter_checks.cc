#include "diagnose/vcenter_checks.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace ccm::diagnose {
namespace {

std::string Msg(const absl::Status& s) { return std::string(s.message()); }

std::string CredentialPlace(const cloud::VirtualCenterConfig& vc) {
  switch (vc.credential_source) {
    case cloud::CredentialSourceKind::kInline:
      return "user and password in the config";
    case cloud::CredentialSourceKind::kGlobalSecret:
    case cloud::CredentialSourceKind::kVCenterSecret:
      return absl::StrCat("the Secret ", vc.secret_namespace, "/", vc.secret_name, " (keys ",
                          vc.server, ".username and ", vc.server, ".password)");
    case cloud::CredentialSourceKind::kSecretsDirectory:
      return absl::StrCat("the files in ", vc.secrets_directory);
  }
  return "the credentials";
}

// The TLS line when verification failed: what was expected and what the server showed.
void JudgeTls(const cloud::VirtualCenterConfig& vc, const VcenterFacts& f, const std::string& check,
              Report& report) {
  const std::string shown =
      f.server_thumbprint.empty() ? std::string("unknown") : absl::StrCat(f.server_thumbprint);
  if (!vc.thumbprint.empty()) {
    report.Error(check,
                 absl::StrCat("the server's certificate has thumbprint ", shown,
                              ", the config pins ", vc.thumbprint),
                 absl::StrCat("if this is your vCenter's certificate (compare it in the vCenter "
                              "appliance's certificate management), set thumbprint = ",
                              shown));
    return;
  }
  const std::string trust = vc.ca_file.empty() ? std::string("the system's CAs")
                                               : absl::StrCat("the CAs in ", vc.ca_file);
  report.Error(
      check,
      absl::StrCat("the server's certificate (thumbprint ", shown, ") is not trusted by ", trust,
                   ": ", Msg(*f.tls)),
      absl::StrCat("put the CA that signed vCenter's certificate in ca-file (vCenter serves its "
                   "root CAs at https://",
                   vc.server, "/certs/download.zip), or pin thumbprint = ", shown));
}

// Steps up to the TLS handshake; false when one failed (the rest was not reached).
bool JudgeConnection(const cloud::VirtualCenterConfig& vc, const VcenterFacts& f,
                     const std::string& check, Report& report) {
  if (!f.dns) return false;
  if (!f.dns->ok()) {
    report.Error(check, absl::StrCat("cannot resolve ", vc.server, ": ", Msg(*f.dns)),
                 "correct the server name in the config, or the DNS of this machine");
    return false;
  }
  report.Ok(check, absl::StrCat(vc.server, " resolves to ", absl::StrJoin(f.addresses, ", ")));
  if (!f.tcp) return false;
  if (!f.tcp->ok()) {
    report.Error(check,
                 absl::StrCat("no TCP connection to ", vc.server, ":", vc.port, ": ", Msg(*f.tcp)),
                 "check the port, that vCenter is up, and the firewalls between this machine and "
                 "vCenter");
    return false;
  }
  report.Ok(check, absl::StrCat("TCP connection to ", vc.server, ":", vc.port));
  if (!f.tls) return false;
  if (!f.tls->ok()) {
    JudgeTls(vc, f, check, report);
    return false;
  }
  if (vc.insecure_flag) {
    report.Warn(check,
                absl::StrCat("TLS without verification (insecure-flag); the server's thumbprint "
                             "is ",
                             f.server_thumbprint),
                absl::StrCat("pin it: thumbprint = ", f.server_thumbprint));
  } else {
    report.Ok(check,
              absl::StrCat("TLS certificate verified (thumbprint ", f.server_thumbprint, ")"));
  }
  return true;
}

// Credentials and login; false when one failed.
bool JudgeLogin(const cloud::VirtualCenterConfig& vc, const VcenterFacts& f,
                const std::string& check, Report& report) {
  if (!f.credentials) return false;
  if (!f.credentials->ok()) {
    report.Error(check, absl::StrCat("no credentials: ", Msg(*f.credentials)),
                 absl::StrCat("provide them in ", CredentialPlace(vc)));
    return false;
  }
  if (!f.login) return false;
  if (!f.login->ok()) {
    report.Error(check, absl::StrCat("login as ", f.user, " failed: ", Msg(*f.login)),
                 absl::StrCat("check the user (with its domain, e.g. k8s@vsphere.local) and "
                              "password in ",
                              CredentialPlace(vc)));
    return false;
  }
  report.Ok(check, absl::StrCat("logged in as ", f.user, " to ", f.full_name));
  return true;
}

void JudgeVersion(const VcenterFacts& f, Component component, const std::string& check,
                  Report& report) {
  const std::string line = absl::StrCat("vSphere API ", f.api_version);
  if (VersionAtLeast(f.api_version, "6.7.3")) {
    report.Ok(check, line);
  } else if (component == Component::kCsi) {
    report.Error(check, absl::StrCat(line, " is older than 6.7U3: it has no Cloud Native Storage"),
                 "upgrade vCenter to 6.7U3 or later (7.0U3 or later for every feature)");
  } else {
    report.Warn(check, absl::StrCat(line, " is older than 6.7U3, the oldest supported"),
                "upgrade vCenter to 6.7U3 or later");
  }
}

void JudgeDatacenters(const cloud::VirtualCenterConfig& vc, const VcenterFacts& f,
                      const std::string& check, Report& report) {
  if (!f.datacenters) return;
  if (!f.datacenters->ok()) {
    report.Error(check, absl::StrCat("cannot list datacenters: ", Msg(*f.datacenters)),
                 "give the user read access (System.Read) from the root folder down");
    return;
  }
  const std::string all =
      f.datacenter_paths.empty() ? std::string("none") : absl::StrJoin(f.datacenter_paths, ", ");
  if (f.datacenter_paths.empty()) {
    report.Error(check, "the user sees no datacenter",
                 "give the user read access (System.Read) on the datacenters, propagated");
    return;
  }
  if (vc.datacenters.empty()) {
    report.Ok(check, absl::StrCat("no datacenters configured: every one is used (", all, ")"));
  }
  for (const DatacenterMatch& m : f.datacenter_matches) {
    if (m.status.ok()) {
      report.Ok(check, absl::StrCat("datacenter ", m.spec, " found (", m.path, ")"));
    } else {
      report.Error(
          check, absl::StrCat("datacenter ", m.spec, ": ", Msg(m.status), "; the user sees ", all),
          "correct datacenters in the config (a name, inventory path or MOID from that "
          "list), or give the user read access to the datacenter");
    }
  }
}

void JudgeSessions(const VcenterFacts& f, const std::string& check, Report& report) {
  if (!f.sessions) return;
  if (!f.sessions->ok()) {
    report.Warn(check, absl::StrCat("cannot read the session list: ", Msg(*f.sessions)),
                "nothing to fix for the component; grant Sessions.TerminateSession to see it");
    return;
  }
  const std::string line =
      absl::StrCat(f.user_sessions, " session", f.user_sessions == 1 ? "" : "s", " of ", f.user,
                   " open (this one included), ", f.all_sessions, " in all");
  if (f.user_sessions > kSessionWarnThreshold) {
    report.Warn(check, line,
                "a client with these credentials does not log out: find it in vCenter's session "
                "list; vCenter refuses logins past its session limit");
  } else {
    report.Ok(check, line);
  }
}

}  // namespace

void JudgeVcenter(const cloud::VirtualCenterConfig& vc, const VcenterFacts& f, Component component,
                  Report& report) {
  const std::string check = absl::StrCat("vcenter ", vc.label);
  if (!JudgeConnection(vc, f, check, report)) return;
  if (!JudgeLogin(vc, f, check, report)) return;
  JudgeVersion(f, component, check, report);
  JudgeDatacenters(vc, f, check, report);
  JudgeSessions(f, check, report);
}

bool VersionAtLeast(const std::string& version, const std::string& minimum) {
  std::vector<std::string> a = absl::StrSplit(version, '.');
  std::vector<std::string> b = absl::StrSplit(minimum, '.');
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    int x = 0, y = 0;
    if (i < a.size() && !absl::SimpleAtoi(a[i], &x)) return false;
    if (i < b.size() && !absl::SimpleAtoi(b[i], &y)) return false;
    if (x != y) return x > y;
  }
  return true;
}

}  // namespace ccm::diagnose
