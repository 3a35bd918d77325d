#include "controller_env.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "app/shared/vcenter_metrics.h"
#include "csi/controller/controller_plugin.h"
#include "csi/core/constants.h"
#include "csi/core/volume_id.h"
#include "csi/server/identity_service.h"
#include "kube/config.h"
#include "testing/eventually.h"

namespace ccm::csi::testing {

std::string ZonesSpec() {
  return R"({
  "users": {"csi-user": "csi-pass"},
  "datacenters": [{"name": "dc1",
    "clusters": [{"name": "zone-a", "hosts": 2}, {"name": "zone-b", "hosts": 1}],
    "vms": [{"name": "node-a1", "cluster": "zone-a"}, {"name": "node-a2", "cluster": "zone-a"},
            {"name": "node-b1", "cluster": "zone-b"}],
    "datastores": [{"name": "datastore1", "capacity_mb": 2048},
                   {"name": "ds-a", "capacity_mb": 204800, "clusters": ["zone-a"]},
                   {"name": "ds-b", "capacity_mb": 102400, "clusters": ["zone-b"]},
                   {"name": "ds-shared", "capacity_mb": 51200, "clusters": ["zone-a", "zone-b"]}]}],
  "tag_categories": [{"name": "k8s-zone"}, {"name": "k8s-region"}],
  "tags": [{"name": "zone-a", "category": "k8s-zone", "attach": ["/dc1/host/zone-a"]},
           {"name": "zone-b", "category": "k8s-zone", "attach": ["/dc1/host/zone-b"]},
           {"name": "region-1", "category": "k8s-region", "attach": ["/dc1"]}]
})";
}

absl::StatusOr<std::unique_ptr<ControllerEnv>> ControllerEnv::Start(const std::string& spec,
                                                                    absl::Duration change_delay) {
  return StartMulti({spec}, change_delay);
}

absl::StatusOr<std::unique_ptr<ControllerEnv>> ControllerEnv::StartMulti(
    const std::vector<std::string>& specs, absl::Duration change_delay,
    const std::function<void(cloud::Config&)>& configure) {
  return StartWith(specs, Options{change_delay, configure, {}});
}

absl::Status ControllerEnv::PutNode(const std::string& vm) {
  const std::string uuid = VmUuid(vm);
  if (uuid.empty()) return absl::NotFoundError(absl::StrCat("no simulator VM ", vm));
  nlohmann::json node = {{"apiVersion", "v1"},
                         {"kind", "Node"},
                         {"metadata", {{"name", vm}}},
                         {"spec", {{"providerID", absl::StrCat("vsphere://", uuid)}}}};
  return api_.Put("nodes", node).status();
}

absl::Status ControllerEnv::PutBareNode(const std::string& name) {
  nlohmann::json node = {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", name}}}};
  return api_.Put("nodes", node).status();
}

absl::Status ControllerEnv::PutCsiNode(const std::string& vm) {
  const std::string uuid = VmUuid(vm);
  if (uuid.empty()) return absl::NotFoundError(absl::StrCat("no simulator VM ", vm));
  nlohmann::json csinode = {{"apiVersion", "storage.k8s.io/v1"},
                            {"kind", "CSINode"},
                            {"metadata", {{"name", vm}}},
                            {"spec",
                             {{"drivers",
                               {{{"name", "other.csi.example.com"}, {"nodeID", "node-x"}},
                                {{"name", "csi.vsphere.vmware.com"}, {"nodeID", uuid}}}}}}};
  return api_.Put("csinodes", csinode).status();
}

std::string ControllerEnv::DatastoreUrl(const std::string& name) {
  auto view = backend_->datastores().Snapshot();
  if (!view.ok()) return "";
  for (const auto& c : (*view)->datastores) {
    if (c.name == name) return c.url;
  }
  return "";
}

absl::StatusOr<std::unique_ptr<ControllerEnv>> ControllerEnv::StartWith(
    const std::vector<std::string>& specs, const Options& options) {
  const absl::Duration change_delay = options.change_delay;
  const std::function<void(cloud::Config&)>& configure = options.configure;
  auto env = std::unique_ptr<ControllerEnv>(new ControllerEnv());
  for (size_t i = 0; i < specs.size(); ++i) {
    auto sim = ccm::testing::VcsimProcess::Start(specs[i]);
    if (!sim.ok()) return sim.status();
    env->sims_.push_back(*std::move(sim));

    cloud::VirtualCenterConfig vc;
    const std::string hp = env->sims_.back()->host_port();
    vc.label = absl::StrCat("vc", i + 1);
    vc.server = hp.substr(0, hp.rfind(':'));
    vc.port = std::stoi(hp.substr(hp.rfind(':') + 1));
    vc.ca_file = env->sims_.back()->info().ca_file;
    vc.user = "csi-user";
    vc.password = Secret("csi-pass");
    env->config_.vcenters.push_back(vc);
  }
  env->config_.global.cluster_id = "test-cluster";
  env->config_.labels.zone = "k8s-zone";
  env->config_.labels.region = "k8s-region";
  if (configure) configure(env->config_);

  // The cluster's Nodes, as the CPI initialised them, and the driver's namespace (its records).
  if (absl::StatusOr<std::string> url = env->api_.Start(); !url.ok()) return url.status();
  if (auto ns = env->api_.Create("namespaces", {{"metadata", {{"name", "vmware-system-csi"}}}});
      !ns.ok()) {
    return ns.status();
  }
  // The driver's CRDs that the emulator serves only once installed (crds.yaml).
  for (const char* crd : {"cnsvolumeinfoes.cns.vmware.com", "csinodetopologies.cns.vmware.com"}) {
    nlohmann::json obj = {{"apiVersion", "apiextensions.k8s.io/v1"},
                          {"kind", "CustomResourceDefinition"},
                          {"metadata", {{"name", crd}}},
                          {"spec", {{"group", "cns.vmware.com"}}}};
    if (auto made = env->api_.Create("customresourcedefinitions", obj); !made.ok()) {
      return made.status();
    }
  }
  for (const auto& sim : env->sims_) {
    for (const auto& vm : sim->info().vms) {
      if (std::find(options.not_nodes.begin(), options.not_nodes.end(), vm.name) !=
          options.not_nodes.end()) {
        continue;
      }
      if (absl::Status s = env->PutNode(vm.name); !s.ok()) return s;
    }
  }
  const std::string kubeconfig = env->dir_.File("kubeconfig");
  if (absl::Status s = env->api_.WriteKubeconfig(kubeconfig); !s.ok()) return s;
  absl::StatusOr<kube::Config> kc = kube::LoadKubeconfig(kubeconfig);
  if (!kc.ok()) return kc.status();
  kc->qps = 1000;
  kc->burst = 1000;
  auto rest = kube::RestClient::New(*kc);
  if (!rest.ok()) return rest.status();

  BackendOptions bo;
  bo.datastore_change_delay = change_delay;
  bo.datastore_interval = options.datastore_interval;
  bo.registry = &env->registry_;
  bo.cns_observer = app::CnsOperationsObserver(env->registry_);
  metrics::Registry* registry = &env->registry_;
  bo.observer_for = [registry](const std::string& vcenter) {
    return app::CsiRequestObserver(*registry, vcenter);
  };
  bo.kube = std::shared_ptr<kube::Client>(*std::move(rest));
  auto plugin = StartControllerPlugin(env->config_, bo);  // the binary's controller wiring
  if (!plugin.ok()) return plugin.status();
  env->backend_ = plugin->backend;

  IdentityOptions io;
  io.name = std::string(kDriverName);
  io.vendor_version = "test";
  io.controller_service = true;
  io.accessibility_constraints = true;
  io.ready = plugin->ready;
  auto identity = IdentityService::Create(io);
  if (!identity.ok()) return identity.status();
  CsiServices services;
  services.identity = *std::move(identity);
  services.controller = std::move(plugin->service);
  CsiServerOptions so;
  so.endpoint = "unix://" + env->dir_.File("csi.sock");
  so.shutdown_grace = absl::Seconds(1);
  so.registry = &env->registry_;
  env->server_ = std::make_unique<CsiServer>(so, std::move(services));
  if (absl::Status s = env->server_->Start(); !s.ok()) return s;
  auto channel = UnixChannel(env->server_->socket_path());
  env->controller_ = ::csi::v1::Controller::NewStub(channel);
  env->identity_ = ::csi::v1::Identity::NewStub(channel);

  std::string why;
  if (!ccm::testing::Eventually(
          [&] { return env->backend_->Ready(&why) && env->backend_->nodes()->List().ok(); },
          absl::Seconds(60))) {
    return absl::DeadlineExceededError(absl::StrCat("backend not ready: ", why));
  }
  return env;
}

ControllerEnv::~ControllerEnv() {
  if (server_ != nullptr) server_->Stop();
  if (backend_ != nullptr) backend_->Stop();
  api_.Stop();
}

std::string ControllerEnv::VmUuid(const std::string& name) const {
  for (const auto& sim : sims_) {
    for (const auto& vm : sim->info().vms) {
      if (vm.name == name) return vm.uuid;
    }
  }
  return "";
}

std::string ControllerEnv::VmMoid(const std::string& name) const {
  for (const auto& sim : sims_) {
    for (const auto& vm : sim->info().vms) {
      if (vm.name == name) return vm.moid;
    }
  }
  return "";
}

absl::StatusOr<ccm::testing::VcsimCnsVolume> ControllerEnv::CnsVolume(
    const std::string& volume_id) {
  auto ref = ParseVolumeId(volume_id);
  if (!ref.ok()) return ref.status();
  for (size_t i = 0; i < sims_.size(); ++i) {
    if (!ref->vcenter.empty() && !absl::EqualsIgnoreCase(ref->vcenter, config_.vcenters[i].label)) {
      continue;
    }
    auto volumes = sims_[i]->CnsVolumes();
    if (!volumes.ok()) return volumes.status();
    for (const auto& v : *volumes) {
      if (v.id == ref->cns_id) return v;
    }
  }
  return absl::NotFoundError(absl::StrCat("simulator has no volume ", volume_id));
}

std::string ControllerEnv::DatastoreMoid(const std::string& name) {
  auto view = backend_->datastores().Snapshot();
  if (!view.ok()) return "";
  for (const auto& c : (*view)->datastores) {
    if (c.name == name) return c.moref;
  }
  return "";
}

::csi::v1::VolumeCapability MountCap(const std::string& fs) {
  ::csi::v1::VolumeCapability cap;
  cap.mutable_mount()->set_fs_type(fs);
  cap.mutable_access_mode()->set_mode(::csi::v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER);
  return cap;
}

::csi::v1::VolumeCapability BlockCap() {
  ::csi::v1::VolumeCapability cap;
  cap.mutable_block();
  cap.mutable_access_mode()->set_mode(::csi::v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER);
  return cap;
}

::csi::v1::CreateVolumeRequest CreateReq(const std::string& name, int64_t required_bytes) {
  ::csi::v1::CreateVolumeRequest req;
  req.set_name(name);
  *req.add_volume_capabilities() = MountCap();
  if (required_bytes > 0) req.mutable_capacity_range()->set_required_bytes(required_bytes);
  return req;
}

}  // namespace ccm::csi::testing
