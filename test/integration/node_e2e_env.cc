#include "integration/node_e2e_env.h"

#include <stdlib.h>

#include <filesystem>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "app/app_metrics.h"
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
                               const std::function<bool(const kube::WatchEvent&)>& on_event,
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

  // From here on as manager.cc's Controllers::Run.
  for (const auto& vcc : config_.vcenters) {
    cloud::VCenterOptions vo;
    vo.observer = app::VCenterRequestObserver(registry_, vcc.label);
    vcs_.push_back(std::make_unique<cloud::VCenter>(vcc, &creds, vo));
  }
  std::vector<cloud::VCenter*> raw;
  for (auto& vc : vcs_) {
    vc->Start();
    raw.push_back(vc.get());
  }
  instances_ = std::make_unique<cloud::VSphereInstances>(config_, raw);
  // The manager's Node cache (trimmed, compact, with the providerID index).
  nodes_ = std::make_unique<kube::Informer>(*client_, kube::Nodes(), controllers::NodeCacheOptions());
  by_provider_id_ = std::make_unique<controllers::ProviderIdIndex>(*nodes_);
  sink_ = std::make_unique<kube::KubeEventSink>(*client_);
  kube::EventRecorderOptions ro;
  ro.host = "node-e2e";
  ro.clock = &recorder_clock_;
  recorder_ = std::make_unique<kube::EventRecorder>(*sink_, ro);

  controllers::NodeControllerOptions no;
  no.workers = options_.concurrent_node_syncs;
  no.status_update_frequency = options_.node_status_update_frequency;
  no.clock = &clock_;
  no.metrics = &registry_;
  node_ = std::make_unique<controllers::NodeController>(*client_, *nodes_, *instances_,
                                                        recorder_.get(), std::move(no));
  controllers::NodeLifecycleControllerOptions lo;
  lo.monitor_period = options_.node_monitor_period;
  lo.clock = &clock_;
  lo.metrics = &registry_;
  lifecycle_ = std::make_unique<controllers::NodeLifecycleController>(
      *client_, *nodes_, *instances_, recorder_.get(), lo);
  nodes_->Start();
  node_->Start();
  lifecycle_->Start();
  // manager.cc registers the VM-change listener once each cache has loaded (changes only).
  for (auto& vc : vcs_) {
    if (!vc->inventory().WaitForSync(absl::Seconds(30))) {
      return absl::DeadlineExceededError(
          absl::StrCat("vCenter ", vc->label(),
                       ": inventory not synced: ", vc->inventory().stats().last_error.ToString()));
    }
    cloud::VCenter* v = vc.get();
    listeners_.push_back(
        {v, v->inventory().AddListener([this, v](const std::string& moid, vsphere::VmChangeKind) {
           OnVmChange(*v, moid);
         })});
  }
  if (!nodes_->WaitForSync(absl::Seconds(20))) return absl::DeadlineExceededError("node informer");
  return absl::OkStatus();
}

void NodeE2eEnv::OnVmChange(cloud::VCenter& vc, const std::string& moid) {
  auto f = vc.inventory().FindByMoid(moid);
  if (!f.ok()) return;
  const std::string pid = absl::StrCat("vsphere://", absl::AsciiStrToLower(f->bios_uuid));
  if (auto name = by_provider_id_->NodeFor(pid)) node_->EnqueueAddressRefresh(*name);
}

void NodeE2eEnv::Stop() {
  if (stopped_) return;
  stopped_ = true;
  for (auto& [vc, id] : listeners_) vc->inventory().RemoveListener(id);
  if (lifecycle_) lifecycle_->Stop();
  if (node_) node_->Stop();
  if (nodes_) nodes_->Stop();
  if (recorder_) {
    recorder_->Flush();
    recorder_->Shutdown();
  }
  for (auto& vc : vcs_) vc->Stop();
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
        kube::ObjectPtr n = nodes_->Get(name);
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
  if (!lifecycle_->WaitForPasses(1, timeout)) return false;
  const int64_t n = lifecycle_->passes();
  clock_.Advance(options_.node_monitor_period);
  return lifecycle_->WaitForPasses(n + 1, timeout);
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

bool Eventually(const std::function<bool()>& cond, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!cond()) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(5));
  }
  return true;
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
