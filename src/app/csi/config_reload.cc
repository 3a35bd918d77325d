#include "app/csi/config_reload.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "app/csi/config.h"
#include "common/logging.h"

namespace ccm::app {
namespace {

// Every key of one vCenter entry that differs, but the password.
std::vector<std::string> VCenterKeys(const cloud::VirtualCenterConfig& a,
                                     const cloud::VirtualCenterConfig& b) {
  std::vector<std::string> out;
  auto key = [&](bool differs, absl::string_view name) {
    if (differs) out.push_back(absl::StrCat("vCenter \"", a.label, "\": ", name, " changed"));
  };
  key(a.server != b.server, "server");
  key(a.port != b.port, "port");
  key(a.user != b.user, "user (CNS records it as each volume's owner)");
  key(a.insecure_flag != b.insecure_flag, "insecure-flag");
  key(a.ca_file != b.ca_file, "ca-file");
  key(a.thumbprint != b.thumbprint, "thumbprint");
  key(a.datacenters != b.datacenters, "datacenters");
  key(a.soap_roundtrip_count != b.soap_roundtrip_count, "soap-roundtrip-count");
  key(a.credential_source != b.credential_source, "credential source");
  key(a.secrets_directory != b.secrets_directory, "secrets-directory");
  key(a.ip_families != b.ip_families, "ip-family");
  key(a.migration_datastore_url != b.migration_datastore_url, "migration-datastoreurl");
  key(a.target_vsan_file_share_datastore_urls != b.target_vsan_file_share_datastore_urls,
      "targetvSANFileShareDatastoreURLs");
  key(a.target_vsan_file_share_clusters != b.target_vsan_file_share_clusters,
      "targetvSANFileShareClusters");
  return out;
}

// The sections the driver reads once at start-up, compared whole ([Global] without the
// inherited credentials, which are compared per vCenter).
std::vector<std::string> SectionKeys(const cloud::Config& a, const cloud::Config& b) {
  std::vector<std::string> out;
  cloud::GlobalConfig ga = a.global, gb = b.global;
  ga.user = gb.user = "";
  ga.password = gb.password = Secret();
  if (!(ga == gb)) out.push_back("[Global] changed");
  if (!(a.labels == b.labels)) out.push_back("[Labels] changed");
  if (!(a.snapshot == b.snapshot)) out.push_back("[Snapshot] changed");
  if (a.net_permissions != b.net_permissions) out.push_back("[NetPermissions] changed");
  return out;
}

}  // namespace

ConfigChange ClassifyCsiConfigChange(const cloud::Config& old_config,
                                     const cloud::Config& new_config) {
  ConfigChange out;
  std::map<std::string, const cloud::VirtualCenterConfig*> before, after;
  for (const auto& vc : old_config.vcenters) before[vc.label] = &vc;
  for (const auto& vc : new_config.vcenters) after[vc.label] = &vc;
  std::vector<std::string> added, removed;
  for (const auto& [label, vc] : after)
    if (!before.count(label)) added.push_back(label);
  for (const auto& [label, vc] : before)
    if (!after.count(label)) removed.push_back(label);
  if (!added.empty()) {
    out.restart_reasons.push_back(absl::StrCat("vCenter added: ", absl::StrJoin(added, ", ")));
  }
  if (!removed.empty()) {
    out.restart_reasons.push_back(absl::StrCat("vCenter removed: ", absl::StrJoin(removed, ", ")));
  }
  for (const auto& [label, vc] : before) {
    auto it = after.find(label);
    if (it == after.end()) continue;
    for (auto& k : VCenterKeys(*vc, *it->second)) out.restart_reasons.push_back(std::move(k));
    if (!(vc->password == it->second->password) &&
        vc->credential_source == cloud::CredentialSourceKind::kInline &&
        it->second->credential_source == cloud::CredentialSourceKind::kInline) {
      out.changed.push_back(absl::StrCat("vCenter \"", label, "\": password changed"));
    }
  }
  for (auto& k : SectionKeys(old_config, new_config)) out.restart_reasons.push_back(std::move(k));
  out.changed.insert(out.changed.end(), out.restart_reasons.begin(), out.restart_reasons.end());
  if (!out.restart_reasons.empty()) {
    out.action = ConfigChange::Action::kRestart;
  } else if (!out.changed.empty()) {
    out.action = ConfigChange::Action::kApplyLive;
  }
  return out;
}

CsiConfigWatch::CsiConfigWatch(Options options, cloud::Config running,
                               cloud::CredentialStore* credentials, absl::Notification* stop)
    : period_(options.period),
      reloader_(
          [&] {
            ConfigReloader::Options ro;
            ro.path = options.path;
            ro.period = options.period > absl::ZeroDuration() ? options.period : absl::Seconds(1);
            ro.clock = options.clock;
            ro.name = options.path;
            ro.parse = [path = options.path, env = options.env](const std::string& bytes) {
              return ParseCsiConfigBytes(bytes, path, env);
            };
            ro.classify = ClassifyCsiConfigChange;
            return ro;
          }(),
          std::move(running)),
      credentials_(credentials),
      stop_(stop) {}

CsiConfigWatch::~CsiConfigWatch() { Stop(); }

void CsiConfigWatch::Start() {
  if (period_ <= absl::ZeroDuration()) return;
  reloader_.Start([this](const ConfigCheck& c) { Handle(c); });
}

void CsiConfigWatch::Stop() { reloader_.Stop(); }

ConfigCheck CsiConfigWatch::CheckNow() {
  ConfigCheck c = reloader_.Check();
  if (c.kind != ConfigCheck::Kind::kUnchanged) Handle(c);
  return c;
}

void CsiConfigWatch::Handle(const ConfigCheck& c) {
  for (const auto& w : c.warnings) LOG_WARN("{}", w);
  switch (c.kind) {
    case ConfigCheck::Kind::kUnchanged:
      break;
    case ConfigCheck::Kind::kNoEffect:
      VLOG(1, "{}", c.message);
      break;
    case ConfigCheck::Kind::kUnreadable:
    case ConfigCheck::Kind::kInvalid:
      LOG_ERROR("{}", c.message);
      break;
    case ConfigCheck::Kind::kApplyLive:
      LOG_INFO("{}", c.message);
      if (credentials_ != nullptr) credentials_->SetInline(*c.config);
      break;
    case ConfigCheck::Kind::kRestart:
      LOG_ERROR("{}; stopping so that the pod restarts with the new file", c.message);
      if (!restart_needed_.HasBeenNotified()) restart_needed_.Notify();
      if (stop_ != nullptr && !stop_->HasBeenNotified()) stop_->Notify();
      break;
  }
}

}  // namespace ccm::app
