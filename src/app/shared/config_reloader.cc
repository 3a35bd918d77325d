#include "app/shared/config_reloader.h"

#include <fstream>
#include <map>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ccm::app {
namespace {

std::map<std::string, const cloud::VirtualCenterConfig*> ByLabel(const cloud::Config& c) {
  std::map<std::string, const cloud::VirtualCenterConfig*> out;
  for (const auto& vc : c.vcenters) out[vc.label] = &vc;
  return out;
}

// The difference between two vCenter entries with the same label, one entry per changed key.
struct Diff {
  std::vector<std::string> live, restart;
};

Diff DiffVCenter(const cloud::VirtualCenterConfig& a, const cloud::VirtualCenterConfig& b) {
  Diff d;
  const std::string where = absl::StrCat("vCenter \"", a.label, "\": ");
  auto key = [&](bool differs, absl::string_view name, bool live, absl::string_view why = "") {
    if (!differs) return;
    if (live) {
      d.live.push_back(absl::StrCat(where, name, " changed"));
    } else {
      d.restart.push_back(absl::StrCat(where, name, " changed (", why, ")"));
    }
  };
  constexpr absl::string_view kConn = "its connection and health check are keyed by it";
  constexpr absl::string_view kCreds = "credentials are routed once at start-up";
  key(a.server != b.server, "server", false, kConn);
  key(a.port != b.port, "port", false, kConn);
  key(a.insecure_flag != b.insecure_flag, "insecure-flag", false, "TLS settings");
  key(a.ca_file != b.ca_file, "ca-file", false, "TLS settings");
  key(a.thumbprint != b.thumbprint, "thumbprint", false, "TLS settings");
  key(a.user != b.user, "user", false, kCreds);
  key(!(a.password == b.password), "password", false, kCreds);
  key(a.credential_source != b.credential_source, "credential source", false, kCreds);
  key(a.secret_name != b.secret_name, "secret-name", false, kCreds);
  key(a.secret_namespace != b.secret_namespace, "secret-namespace", false, kCreds);
  key(a.secrets_directory != b.secrets_directory, "secrets-directory", false, kCreds);
  key(a.datacenters != b.datacenters, "datacenters", true);
  key(a.soap_roundtrip_count != b.soap_roundtrip_count, "soap-roundtrip-count", true);
  key(a.ip_families != b.ip_families, "ip-family", true);
  return d;
}

}  // namespace

ConfigChange ClassifyConfigChange(const cloud::Config& old_config,
                                  const cloud::Config& new_config) {
  ConfigChange out;
  const auto before = ByLabel(old_config), after = ByLabel(new_config);
  std::vector<std::string> added, removed;
  for (const auto& [label, vc] : after)
    if (!before.count(label)) added.push_back(label);
  for (const auto& [label, vc] : before)
    if (!after.count(label)) removed.push_back(label);
  if (!added.empty() || !removed.empty()) {
    std::string what = "the set of vCenters changed";
    if (!added.empty()) absl::StrAppend(&what, " (added: ", absl::StrJoin(added, ", "), ")");
    if (!removed.empty()) absl::StrAppend(&what, " (removed: ", absl::StrJoin(removed, ", "), ")");
    out.changed.push_back(what);
    out.restart_reasons.push_back(what);
  }
  for (const auto& [label, vc] : before) {
    auto it = after.find(label);
    if (it == after.end()) continue;
    Diff d = DiffVCenter(*vc, *it->second);
    out.changed.insert(out.changed.end(), d.restart.begin(), d.restart.end());
    out.changed.insert(out.changed.end(), d.live.begin(), d.live.end());
    out.restart_reasons.insert(out.restart_reasons.end(), d.restart.begin(), d.restart.end());
  }
  auto live = [&](bool differs, absl::string_view what) {
    if (differs) out.changed.push_back(std::string(what));
  };
  live(!(old_config.nodes == new_config.nodes), "[Nodes] changed");
  live(old_config.labels.zone != new_config.labels.zone, "[Labels] zone category changed");
  live(old_config.labels.region != new_config.labels.region, "[Labels] region category changed");
  live(old_config.global.cluster_id != new_config.global.cluster_id, "[Global] cluster-id changed");
  live(!(old_config.nsxt == new_config.nsxt), "[NSXT] changed");
  live(!(old_config.load_balancer == new_config.load_balancer), "[LoadBalancer] changed");
  live(!(old_config.route == new_config.route), "[Route] changed");

  if (!out.restart_reasons.empty()) {
    out.action = ConfigChange::Action::kRestart;
  } else if (!out.changed.empty()) {
    out.action = ConfigChange::Action::kApplyLive;
  }
  return out;
}

absl::string_view ConfigCheckKindName(ConfigCheck::Kind k) {
  switch (k) {
    case ConfigCheck::Kind::kUnchanged:
      return "unchanged";
    case ConfigCheck::Kind::kUnreadable:
      return "unreadable";
    case ConfigCheck::Kind::kInvalid:
      return "invalid";
    case ConfigCheck::Kind::kNoEffect:
      return "no-effect";
    case ConfigCheck::Kind::kApplyLive:
      return "apply-live";
    case ConfigCheck::Kind::kRestart:
      return "restart";
  }
  return "unknown";
}

ConfigReloader::ConfigReloader(Options options, cloud::Config running)
    : options_(std::move(options)),
      clock_(options_.clock != nullptr ? *options_.clock : Clock::Real()),
      running_(std::move(running)) {
  if (options_.name.empty()) options_.name = absl::StrCat("--cloud-config ", options_.path);
  if (!options_.parse) {
    options_.parse = [path = options_.path, env = options_.env,
                      strict = options_.strict](const std::string& bytes) {
      cloud::ParseOptions po;
      po.file_name = path;
      po.strict = strict;
      return cloud::ParseConfig(bytes, env, po);
    };
  }
  if (!options_.classify) options_.classify = ClassifyConfigChange;
}

ConfigReloader::~ConfigReloader() { Stop(); }

ConfigCheck ConfigReloader::Check() {
  ConfigCheck out;
  std::ifstream in(options_.path, std::ios::binary);  // opened by path: follows a swapped symlink
  if (!in) {
    if (unreadable_) return out;
    unreadable_ = true;
    out.kind = ConfigCheck::Kind::kUnreadable;
    out.message = absl::StrCat(options_.name, ": cannot open the file; keeping the running config");
    return out;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  std::string bytes = ss.str();
  const bool was_unreadable = unreadable_;
  unreadable_ = false;
  if (last_bytes_ && *last_bytes_ == bytes && !was_unreadable) return out;
  last_bytes_ = std::move(bytes);

  absl::StatusOr<cloud::ParseResult> parsed = options_.parse(*last_bytes_);
  if (!parsed.ok()) {
    out.kind = ConfigCheck::Kind::kInvalid;
    out.message = absl::StrCat("the changed ", options_.name,
                               " is invalid, keeping the running one: ", parsed.status().message());
    return out;
  }
  out.warnings = parsed->warnings;
  out.change = options_.classify(running_, parsed->config);
  switch (out.change.action) {
    case ConfigChange::Action::kNone:
      out.kind = ConfigCheck::Kind::kNoEffect;
      out.message = absl::StrCat(options_.name, " changed; nothing that matters changed");
      return out;
    case ConfigChange::Action::kApplyLive:
      out.kind = ConfigCheck::Kind::kApplyLive;
      out.message = absl::StrCat(
          options_.name, " changed, applying it live: ", absl::StrJoin(out.change.changed, "; "));
      running_ = parsed->config;
      out.config = std::move(parsed->config);
      return out;
    case ConfigChange::Action::kRestart:
      out.kind = ConfigCheck::Kind::kRestart;
      out.message = absl::StrCat(options_.name, " changed in a way that cannot apply live: ",
                                 absl::StrJoin(out.change.restart_reasons, "; "));
      out.config = std::move(parsed->config);
      return out;
  }
  return out;
}

void ConfigReloader::Start(Handler handler) {
  thread_ = std::thread([this, handler = std::move(handler)] {
    while (!stop_.HasBeenNotified()) {
      ConfigCheck c = Check();
      if (c.kind != ConfigCheck::Kind::kUnchanged) handler(c);
      if (!clock_.SleepFor(options_.period, &stop_)) break;
    }
  });
}

void ConfigReloader::Stop() {
  if (!stop_.HasBeenNotified()) stop_.Notify();
  if (thread_.joinable()) thread_.join();
}

}  // namespace ccm::app
