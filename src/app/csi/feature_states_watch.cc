#include "app/csi/feature_states_watch.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/logging.h"
#include "kube/resource.h"

namespace ccm::app {

FeatureStateSource FeatureStateSourceOf(const std::string& fss_name,
                                        const std::string& fss_namespace,
                                        const std::map<std::string, std::string>& env) {
  FeatureStateSource s{fss_namespace, fss_name};
  if (s.name.empty()) s.name = csi::kFeatureStatesConfigMap;
  if (s.ns.empty()) {
    auto it = env.find("CSI_NAMESPACE");
    s.ns = it != env.end() && !it->second.empty() ? it->second : csi::kDefaultCsiNamespace;
  }
  return s;
}

namespace {

kube::InformerOptions OneConfigMap(const FeatureStateSource& s) {
  kube::InformerOptions o;
  o.ns = s.ns;
  o.field_selector = absl::StrCat("metadata.name=", s.name);
  return o;
}

}  // namespace

FeatureStateWatch::FeatureStateWatch(kube::Client& client, FeatureStateSource source,
                                     std::shared_ptr<csi::FeatureStates> states)
    : source_(std::move(source)),
      states_(std::move(states)),
      informer_(client, kube::ConfigMaps(), OneConfigMap(source_)) {
  kube::ResourceEventHandler h;
  h.on_add = [this](const kube::Json& cm) { Apply(cm); };
  h.on_update = [this](const kube::Json&, const kube::Json& cm) { Apply(cm); };
  h.on_delete = [this](const kube::Json&) {
    LOG_ERROR(
        "feature states: ConfigMap {}/{} was deleted; keeping the last states ({}). Restore it "
        "(the reference's driver cannot start without it)",
        source_.ns, source_.name, absl::StrJoin(states_->Data(), ", ", absl::PairFormatter("=")));
  };
  informer_.AddEventHandler(std::move(h));
}

FeatureStateWatch::~FeatureStateWatch() { Stop(); }

void FeatureStateWatch::Start(absl::Duration timeout) {
  informer_.Start();
  if (!informer_.WaitForSync(timeout)) {
    LOG_WARN(
        "feature states: ConfigMap {}/{} could not be listed within {}; features that are "
        "not released stay off until it can",
        source_.ns, source_.name, absl::FormatDuration(timeout));
    return;
  }
  if (informer_.Get(absl::StrCat(source_.ns, "/", source_.name)) == nullptr) {
    LOG_WARN(
        "feature states: no ConfigMap {}/{}; features that are not released are off (the "
        "reference's manifest ships it)",
        source_.ns, source_.name);
  }
}

void FeatureStateWatch::Stop() { informer_.Stop(); }

void FeatureStateWatch::Apply(const kube::Json& cm) {
  std::map<std::string, std::string> data;
  if (auto it = cm.find("data"); it != cm.end() && it->is_object()) {
    for (const auto& [k, v] : it->items()) {
      if (v.is_string()) data[k] = v.get<std::string>();
    }
  }
  const std::string all = absl::StrJoin(data, ", ", absl::PairFormatter("="));
  std::vector<std::string> changes = states_->Replace(std::move(data));
  if (first_) {
    first_ = false;
    LOG_INFO("feature states from ConfigMap {}/{}: {}", source_.ns, source_.name, all);
    return;
  }
  if (changes.empty()) {
    VLOG(1, "feature states from ConfigMap {}/{}: {}", source_.ns, source_.name, all);
    return;
  }
  LOG_INFO("feature states from ConfigMap {}/{}: {} (all: {})", source_.ns, source_.name,
           absl::StrJoin(changes, "; "), all);
}

}  // namespace ccm::app
