#include "integration/node_e2e_env.h"

#include <stdlib.h>

#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cloud/core/uuid.h"
#include "controllers/node_update.h"
#include "kube/config.h"
#include "kube/resource.h"

namespace ccm::integration {

void HookClient::SetAfterPatch(PatchHook hook) {
  absl::MutexLock l(&mu_);
  after_patch_ = std::move(hook);
}

absl::StatusOr<kube::Json> HookClient::Get(const kube::Resource& r, absl::string_view ns,
                                           absl::string_view name) {
  return inner_.Get(r, ns, name);
}
absl::StatusOr<kube::ListResult> HookClient::List(const kube::Resource& r, absl::string_view ns,
                                                  const kube::ListOptions& o) {
  return inner_.List(r, ns, o);
}
absl::Status HookClient::Watch(const kube::Resource& r, absl::string_view ns,
                               const kube::WatchOptions& o,
                               const std::function<bool(kube::WatchEvent&)>& on_event,
                               const std::atomic<bool>* cancel) {
  return inner_.Watch(r, ns, o, on_event, cancel);
}
absl::StatusOr<kube::Json> HookClient::Create(const kube::Resource& r, absl::string_view ns,
                                              const kube::Json& obj) {
  return inner_.Create(r, ns, obj);
}
absl::StatusOr<kube::Json> HookClient::Update(const kube::Resource& r, const kube::Json& obj,
                                              absl::string_view sub) {
  return inner_.Update(r, obj, sub);
}
absl::StatusOr<kube::Json> HookClient::Patch(const kube::Resource& r, absl::string_view ns,
                                             absl::string_view name, kube::PatchType type,
                                             const kube::Json& patch, absl::string_view sub) {
  absl::StatusOr<kube::Json> out = inner_.Patch(r, ns, name, type, patch, sub);
  PatchHook hook;
  {
    absl::MutexLock l(&mu_);
    hook = after_patch_;
  }
  if (out.ok() && hook) hook(name, sub);
  return out;
}
absl::Status HookClient::Delete(const kube::Resource& r, absl::string_view ns,
                                absl::string_view name, const kube::DeleteOptions& opts) {
  return inner_.Delete(r, ns, name, opts);
}

NodeE2eEnv::NodeE2eEnv() {
  char tmpl[] = "/tmp/ccm-node-e2e-XXXXXX";
  dir_ = mkdtemp(tmpl);
}

NodeE2eEnv::~NodeE2eEnv() {
  Stop();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

absl::Status NodeE2eEnv::Start(const cloud::Config& config, vsphere::CredentialSource& creds,
                               CcmOptions options) {
  options_ = options;
  config_ = config;
  absl::StatusOr<std::string> url = emulator_.Start();
  if (!url.ok()) return url.status();
  const std::string kubeconfig = dir_ + "/kubeconfig";
  if (absl::Status s = emulator_.WriteKubeconfig(kubeconfig); !s.ok()) return s;
  absl::StatusOr<kube::Config> kcfg = kube::LoadKubeconfig(kubeconfig);
  if (!kcfg.ok()) return kcfg.status();
  kcfg->qps = 500;  // --kube-api-qps / --kube-api-burst as a test cluster would set them
  kcfg->burst = 1000;
  absl::StatusOr<std::unique_ptr<kube::RestClient>> rc = kube::RestClient::New(*kcfg);
  if (!rc.ok()) return rc.status();
  rest_ = *std::move(rc);
  client_ = std::make_unique<HookClient>(*rest_);

  // The binary's wiring, with every user on the one HookClient and the schedules on FakeClocks.
  app::ControllerSetOptions so;
  so.concurrent_node_syncs = options_.concurrent_node_syncs;
  so.node_status_update_frequency = options_.node_status_update_frequency;
  so.node_monitor_period = options_.node_monitor_period;
  so.vcenter_max_wait_seconds = options_.vcenter_max_wait_seconds;
  so.vcenter_hang_timeout = options_.vcenter_hang_timeout;
  so.event_host = "node-e2e";
  so.clock = &clock_;
  so.recorder_clock = &recorder_clock_;
  so.metrics = &registry_;
  so.flush_events_on_stop = true;
  so.event_drain_on_stop = absl::InfiniteDuration();
  set_ = std::make_unique<app::ControllerSet>(
      config_, creds,
      app::ControllerClients{
          .informers = *client_, .events = *client_, .node = *client_, .lifecycle = *client_},
      std::move(so));
  set_->Start();
  for (const auto& vc : set_->vcenters()) {
    if (!vc->inventory().WaitForSync(absl::Seconds(30))) {
      return absl::DeadlineExceededError(
          absl::StrCat("vCenter ", vc->label(),
                       ": inventory not synced: ", vc->inventory().stats().last_error.ToString()));
    }
  }
  // The VM-change listeners are registered once each cache has loaded (changes only).
  if (!set_->WaitForVmChangeListeners(absl::Seconds(20))) {
    return absl::DeadlineExceededError("VM-change listeners not registered");
  }
  if (!set_->node_informer().WaitForSync(absl::Seconds(20))) {
    return absl::DeadlineExceededError("node informer");
  }
  return absl::OkStatus();
}

void NodeE2eEnv::Stop() {
  if (stopped_) return;
  stopped_ = true;
  if (set_) set_->Stop();
  emulator_.Stop();
}

absl::StatusOr<kube::Json> NodeE2eEnv::RegisterKubeletNode(
    const std::string& name, const std::string& vm_bios_uuid, bool ready,
    const std::map<std::string, std::string>& annotations) {
  absl::StatusOr<std::string> smbios = cloud::SwapUuidByteOrder(vm_bios_uuid);
  if (!smbios.ok()) return smbios.status();
  kube::Json node = {
      {"apiVersion", "v1"},
      {"kind", "Node"},
      {"metadata",
       {{"name", name},
        {"labels",
         {{"kubernetes.io/hostname", name},
          {"kubernetes.io/os", "linux"},
          {"kubernetes.io/arch", "amd64"}}}}},
      {"spec",
       {{"taints", kube::Json::array({{{"key", std::string(controllers::kUninitializedTaintKey)},
                                       {"value", "true"},
                                       {"effect", "NoSchedule"}}})}}},
      {"status",
       {{"nodeInfo", {{"systemUUID", *smbios}, {"kubeletVersion", "v1.29.0"}}},
        {"conditions", kube::Json::array()}}},
  };
  for (const auto& [k, v] : annotations) kube::SetAnnotation(node, k, v);
  SetReady(node, ready);
  return emulator_.Create("nodes", node);
}

void NodeE2eEnv::SetReady(kube::Json& node, bool ready) {
  kube::Json cond = {{"type", "Ready"},
                     {"status", ready ? "True" : "False"},
                     {"reason", ready ? "KubeletReady" : "NodeStatusUnknown"}};
  kube::Json& conds = node["status"]["conditions"];
  for (auto& c : conds) {
    if (c.value("type", "") == "Ready") {
      c = cond;
      return;
    }
  }
  conds.push_back(cond);
}

kube::Json NodeE2eEnv::GetNode(const std::string& name) const {
  absl::StatusOr<kube::Json> n = emulator_.Get("nodes", "", name);
  return n.ok() ? *n : kube::Json();
}

absl::Status NodeE2eEnv::EditNode(const std::string& name,
                                  const std::function<void(kube::Json&)>& edit) {
  absl::StatusOr<kube::Json> n = emulator_.Get("nodes", "", name);
  if (!n.ok()) return n.status();
  edit(*n);
  return emulator_.Put("nodes", *n).status();
}

bool NodeE2eEnv::StoreSees(const std::string& name,
                           const std::function<bool(const kube::Json&)>& pred,
                           absl::Duration timeout) const {
  return Eventually(
      [&] {
        kube::ObjectPtr n = set_->node_informer().Get(name);
        return n && pred(*n);
      },
      timeout);
}

bool NodeE2eEnv::NodeBecomes(const std::string& name,
                             const std::function<bool(const kube::Json&)>& pred,
                             absl::Duration timeout) const {
  return Eventually([&] { return pred(GetNode(name)); }, timeout);
}

bool NodeE2eEnv::Initialised(const std::string& name, absl::Duration timeout) {
  return Eventually(
      [&] {
        kube::Json n = GetNode(name);
        if (n.is_object() && !kube::ProviderId(n).empty() &&
            !kube::HasTaint(n, controllers::kUninitializedTaintKey)) {
          return true;
        }
        clock_.Advance(absl::Milliseconds(5));
        return false;
      },
      timeout);
}

bool NodeE2eEnv::LifecyclePeriod(absl::Duration timeout) {
  // The first pass runs at Start (after the informer synced) without any advance.
  controllers::NodeLifecycleController& lifecycle = *set_->lifecycle();
  if (!lifecycle.WaitForPasses(1, timeout)) return false;
  const int64_t n = lifecycle.passes();
  clock_.Advance(options_.node_monitor_period);
  return lifecycle.WaitForPasses(n + 1, timeout);
}

std::vector<kube::EventInfo> NodeE2eEnv::EventsFor(const std::string& node) const {
  std::vector<kube::EventInfo> out;
  for (const kube::Json& e : emulator_.List("events")) {
    kube::EventInfo info = kube::GetEventInfo(e);
    if (info.involved_name == node) out.push_back(info);
  }
  return out;
}

bool NodeE2eEnv::WaitForEvent(const std::string& node, const std::string& type,
                              const std::string& reason, const std::string& text,
                              absl::Duration timeout) {
  return Eventually(
      [&] {
        for (const kube::EventInfo& e : EventsFor(node)) {
          if (e.type == type && e.reason == reason && absl::StrContains(e.message, text)) {
            return true;
          }
        }
        recorder_clock_.Advance(absl::Milliseconds(100));
        return false;
      },
      timeout);
}

cloud::VirtualCenterConfig VcConfig(const ccm::testing::VcsimProcess& sim,
                                    const std::string& label) {
  cloud::VirtualCenterConfig vc;
  vc.label = label;
  const std::string hp = sim.host_port();
  vc.server = hp.substr(0, hp.rfind(':'));
  vc.port = std::stoi(hp.substr(hp.rfind(':') + 1));
  vc.ca_file = sim.info().ca_file;
  return vc;
}

std::string VmUuid(const ccm::testing::VcsimProcess& sim, const std::string& name) {
  for (const auto& vm : sim.info().vms)
    if (vm.name == name) return vm.uuid;
  return "";
}

}  // namespace ccm::integration
