#include "peers/csi_stack.h"

#include <signal.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "grpcpp/client_context.h"
#include "peers/kubelet_node.h"
#include "peers/peers.h"
#include "testing/csi_socket.h"
#include "testing/eventually.h"
#include "testing/free_port.h"
#include "yaml-cpp/yaml.h"

namespace ccm::peers {
namespace {
using integration::ChildProcess;
using json = nlohmann::json;

std::string DriverBinary() { return BuildDir() + "/src/app/csi/vsphere-csi-driver"; }

// $(NAME) references in `s` replaced by the env values.
std::string Expand(std::string s, const std::map<std::string, std::string>& env) {
  for (const auto& [k, v] : env) s = absl::StrReplaceAll(s, {{absl::StrCat("$(", k, ")"), v}});
  return s;
}

}  // namespace

absl::StatusOr<ContainerSpec> ManifestContainer(const std::string& kustomize_dir,
                                                const std::string& workload,
                                                const std::string& container) {
  auto rendered = Run({"/usr/bin/kubectl", "kustomize", kustomize_dir});
  if (!rendered.ok()) return rendered.status();
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(*rendered);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(kustomize_dir, ": ", e.what()));
  }
  for (const YAML::Node& d : docs) {
    const std::string kind = d["kind"] ? d["kind"].as<std::string>() : "";
    if ((kind != "Deployment" && kind != "DaemonSet") ||
        d["metadata"]["name"].as<std::string>("") != workload) {
      continue;
    }
    for (const YAML::Node& c : d["spec"]["template"]["spec"]["containers"]) {
      if (c["name"].as<std::string>("") != container) continue;
      ContainerSpec spec;
      for (const YAML::Node& e : c["env"]) {
        if (e["value"]) spec.env[e["name"].as<std::string>()] = e["value"].as<std::string>();
      }
      for (const YAML::Node& a : c["args"])
        spec.args.push_back(Expand(a.as<std::string>(), spec.env));
      return spec;
    }
  }
  return absl::NotFoundError(
      absl::StrCat("no container ", container, " of ", workload, " in ", kustomize_dir));
}

bool WaitObject(kube::Client& client, const kube::Resource& resource, const std::string& ns,
                const std::string& name, const std::function<bool(const json&)>& pred,
                absl::Duration timeout, json* last) {
  return ::ccm::testing::Eventually(
      [&] {
        auto o = client.Get(resource, ns, name);
        if (!o.ok()) return false;
        if (last != nullptr) *last = *o;
        return pred(*o);
      },
      timeout, absl::Milliseconds(100));
}

const kube::Resource& VolumeSnapshots() {
  static const kube::Resource r{"snapshot.storage.k8s.io", "v1", "volumesnapshots",
                                "VolumeSnapshot", true};
  return r;
}
const kube::Resource& VolumeSnapshotContents() {
  static const kube::Resource r{"snapshot.storage.k8s.io", "v1", "volumesnapshotcontents",
                                "VolumeSnapshotContent", false};
  return r;
}
const kube::Resource& VolumeSnapshotClasses() {
  static const kube::Resource r{"snapshot.storage.k8s.io", "v1", "volumesnapshotclasses",
                                "VolumeSnapshotClass", false};
  return r;
}
const kube::Resource& CsiDrivers() {
  static const kube::Resource r{"storage.k8s.io", "v1", "csidrivers", "CSIDriver", false};
  return r;
}
const kube::Resource& CustomResourceDefinitions() {
  static const kube::Resource r{"apiextensions.k8s.io", "v1", "customresourcedefinitions",
                                "CustomResourceDefinition", false};
  return r;
}

absl::StatusOr<std::unique_ptr<CsiStack>> CsiStack::Start(const std::string& name,
                                                          CsiStackOptions options) {
  std::unique_ptr<CsiStack> s(new CsiStack());
  auto kube = KubeCluster::Start(name, {.apiserver_flags = options.apiserver_flags});
  if (!kube.ok()) return kube.status();
  s->kube_ = *std::move(kube);
  if (!options.kcm_controllers.empty()) {
    auto st = s->kube_->StartControllerManager(options.kcm_controllers, options.kcm_flags);
    if (!st.ok()) return st;
  }
  auto vcsim = ::ccm::testing::VcsimProcess::Start(options.spec);
  if (!vcsim.ok()) return vcsim.status();
  s->vcsim_ = *std::move(vcsim);
  if (auto st = s->ApplyManifests(options.overlay); !st.ok()) return st;
  if (auto st = s->WriteConf(options.conf_extra); !st.ok()) return st;
  s->socket_ = s->dir() + "/csi.sock";
  if (auto st = s->StartDriver("syncer", {"X_CSI_MODE=syncer"}); !st.ok()) return st;
  if (auto st = s->StartDriver("controller",
                               {"X_CSI_MODE=controller", "CSI_ENDPOINT=unix://" + s->socket_});
      !st.ok()) {
    return st;
  }
  s->controller_stub_ =
      ::csi::v1::Controller::NewStub(::ccm::csi::testing::UnixChannel(s->socket_));
  if (auto st = s->WaitStarted(); !st.ok()) return st;
  return s;
}

CsiStack::~CsiStack() {
  // Sidecars and drivers before the server they talk to.
  for (auto& [name, p] : processes_) p->Signal(SIGTERM);
  for (auto& [name, p] : processes_) p->WaitExit(absl::Seconds(5));
  processes_.clear();
  vcsim_.reset();
  kube_.reset();
}

// The controller serves its socket and the syncer leads (the manifest runs it with
// --leader-election: Lease vsphere-syncer), or the error with what the one that died said.
absl::Status CsiStack::WaitStarted() {
  std::error_code ec;
  const bool ok = ::ccm::testing::Eventually(
      [&] {
        if (!controller_process().Running() || !syncer_process().Running()) return true;
        auto lease = client().Get(kube::Leases(), kCsiNamespace, "vsphere-syncer");
        return std::filesystem::exists(socket_, ec) && lease.ok() &&
               !(*lease)["spec"].value("holderIdentity", "").empty();
      },
      absl::Seconds(60), absl::Milliseconds(100));
  for (const char* name : {"controller", "syncer"}) {
    if (!processes_.at(name)->Running()) {
      return absl::UnavailableError(
          absl::StrCat("the ", name, " exited: ", processes_.at(name)->Stderr()));
    }
  }
  if (!ok)
    return absl::DeadlineExceededError("the controller or the syncer did not start" + Logs());
  return absl::OkStatus();
}

absl::Status CsiStack::ApplyManifests(const std::string& overlay) {
  overlay_dir_ = SourceDir() + "/deploy/csi/kustomize/overlays/" + overlay;
  auto out = kube_->Kubectl({"apply", "-k", overlay_dir_});
  if (!out.ok()) return out.status();
  // The CRDs serve once Established.
  auto established = [&] {
    auto crds = client().List(CustomResourceDefinitions(), "", {});
    if (!crds.ok()) return false;
    for (const json& crd : crds->items) {
      bool ok = false;
      for (const json& c : crd["status"].value("conditions", json::array())) {
        ok = ok || (c.value("type", "") == "Established" && c.value("status", "") == "True");
      }
      if (!ok) return false;
    }
    return true;
  };
  if (!::ccm::testing::Eventually(established, absl::Seconds(30), absl::Milliseconds(100))) {
    return absl::DeadlineExceededError("the manifests' CRDs are not Established");
  }
  return absl::OkStatus();
}

absl::Status CsiStack::WriteConf(const std::string& extra) {
  const std::string hp = vcsim_->host_port();
  conf_ = dir() + "/csi-vsphere.conf";
  std::ofstream out(conf_);
  out << "[Global]\ncluster-id = \"peers-cluster\"\n\n"
      << "[VirtualCenter \"127.0.0.1\"]\nport = \"" << hp.substr(hp.rfind(':') + 1) << "\"\n"
      << "user = \"csi-user\"\npassword = \"csi-pass\"\n"
      << "ca-file = \"" << vcsim_->info().ca_file << "\"\ndatacenters = \"dc1\"\n\n"
      << extra;
  out.close();
  return out ? absl::OkStatus() : absl::InternalError("cannot write " + conf_);
}

absl::StatusOr<std::string> CsiStack::ServiceAccountKubeconfig(const std::string& sa) {
  if (auto it = sa_kubeconfigs_.find(sa); it != sa_kubeconfigs_.end()) return it->second;
  auto kc = kube_->KubeconfigFor(
      absl::StrCat("system:serviceaccount:", kCsiNamespace, ":", sa),
      {"system:serviceaccounts", absl::StrCat("system:serviceaccounts:", kCsiNamespace)});
  if (kc.ok()) sa_kubeconfigs_[sa] = *kc;
  return kc;
}

absl::Status CsiStack::StartDriver(const std::string& name, const std::vector<std::string>& env) {
  const bool node = absl::StartsWith(name, "node-");
  auto kc = ServiceAccountKubeconfig(node ? "vsphere-csi-node" : "vsphere-csi-controller");
  if (!kc.ok()) return kc.status();
  const std::string container = node               ? "vsphere-csi-node"
                                : name == "syncer" ? "vsphere-syncer"
                                                   : "vsphere-csi-controller";
  const std::string workload = node ? "vsphere-csi-node" : "vsphere-csi-controller";
  auto spec = ManifestContainer(overlay_dir_, workload, container);
  if (!spec.ok()) return spec.status();
  std::vector<std::string> argv = {"/usr/bin/env",
                                   "-i",
                                   "KUBECONFIG=" + *kc,
                                   absl::StrCat("CSI_NAMESPACE=", kCsiNamespace),
                                   absl::StrCat("POD_NAMESPACE=", kCsiNamespace),
                                   "POD_NAME=vsphere-csi-" + name};
  // The manifest's plain values first (ours below win): paths are this machine's.
  for (const auto& [k, v] : spec->env) {
    if (k != "VSPHERE_CSI_CONFIG" && k != "CSI_ENDPOINT" && k != "ADDRESS") {
      argv.push_back(k + "=" + v);
    }
  }
  if (!node) argv.push_back("VSPHERE_CSI_CONFIG=" + conf_);
  argv.insert(argv.end(), env.begin(), env.end());
  argv.push_back(DriverBinary());
  for (const std::string& a : spec->args) {
    argv.push_back(absl::StrReplaceAll(a, {{"$(CSI_NAMESPACE)", kCsiNamespace}}));
  }
  if (!node) argv.push_back(absl::StrCat("--metrics-port=", ::ccm::testing::FreePort()));
  argv.push_back("-v=4");
  auto p = ChildProcess::Start(argv, dir() + "/" + name);
  if (!p.ok()) return p.status();
  processes_[name] = *std::move(p);
  return absl::OkStatus();
}

std::string CsiStack::VmUuid(const std::string& vm) const {
  for (const auto& v : vcsim_->info().vms) {
    if (v.name == vm) return v.uuid;
  }
  return "";
}

::csi::v1::Node::Stub* CsiStack::node(const std::string& vm) {
  auto it = node_stubs_.find(vm);
  return it == node_stubs_.end() ? nullptr : it->second.get();
}

absl::Status CsiStack::AddNode(const std::string& vm, const std::string& zone,
                               const std::vector<std::string>& env) {
  const std::string uuid = VmUuid(vm);
  if (uuid.empty()) return absl::NotFoundError("no simulator VM " + vm);
  json node = KubeletNode({.name = vm, .bios_uuid = uuid, .images = 2});
  node["spec"].erase("taints");  // initialised by the CPI
  node["spec"]["providerID"] = "vsphere://" + uuid;
  if (!zone.empty()) {
    node["metadata"]["labels"]["topology.kubernetes.io/zone"] = zone;
    node["metadata"]["labels"]["topology.kubernetes.io/region"] = "region-1";
  }
  if (auto n = client().Create(kube::Nodes(), "", node); !n.ok()) return n.status();
  const std::string sock = NodeSocket(vm);
  std::vector<std::string> node_env = {"X_CSI_MODE=node", "CSI_ENDPOINT=unix://" + sock,
                                       "NODE_NAME=" + vm};
  node_env.insert(node_env.end(), env.begin(), env.end());
  if (auto s = StartDriver("node-" + vm, node_env); !s.ok()) return s;
  // What node-driver-registrar and the kubelet do with the plugin's NodeGetInfo.
  node_stubs_[vm] = ::csi::v1::Node::NewStub(::ccm::csi::testing::UnixChannel(sock));
  ::csi::v1::Node::Stub* stub = node_stubs_[vm].get();
  ::csi::v1::NodeGetInfoResponse info;
  grpc::Status st;
  ::ccm::testing::Eventually(
      [&] {
        grpc::ClientContext ctx;
        ctx.set_wait_for_ready(true);  // the plugin may not be listening yet
        ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(130));
        st = stub->NodeGetInfo(&ctx, {}, &info);
        return st.ok();
      },
      absl::Seconds(140), absl::Milliseconds(200));
  if (!st.ok()) {
    return absl::UnavailableError(absl::StrCat("NodeGetInfo of ", vm, ": ", st.error_message()));
  }
  json keys = json::array();
  json labels = json::object();
  for (const auto& [k, v] : info.accessible_topology().segments()) {
    keys.push_back(k);
    labels[k] = v;
  }
  json csinode = {
      {"apiVersion", "storage.k8s.io/v1"},
      {"kind", "CSINode"},
      {"metadata",
       {{"name", vm},
        {"annotations",
         {{"storage.alpha.kubernetes.io/migrated-plugins", "kubernetes.io/vsphere-volume"}}}}},
      {"spec",
       {{"drivers",
         {{{"name", kDriver},
           {"nodeID", info.node_id()},
           {"topologyKeys", keys},
           {"allocatable", {{"count", info.max_volumes_per_node()}}}}}}}}};
  if (auto c = client().Create(kube::CsiNodes(), "", csinode); !c.ok()) return c.status();
  if (!labels.empty()) {
    auto p = client().Patch(kube::Nodes(), "", vm, kube::PatchType::kStrategicMerge,
                            {{"metadata", {{"labels", labels}}}});
    if (!p.ok()) return p.status();
  }
  return absl::OkStatus();
}

absl::Status CsiStack::AddNodeObjects(const std::string& vm, int max_volumes) {
  const std::string uuid = VmUuid(vm);
  if (uuid.empty()) return absl::NotFoundError("no simulator VM " + vm);
  json node = KubeletNode({.name = vm, .bios_uuid = uuid, .images = 2});
  node["spec"].erase("taints");
  node["spec"]["providerID"] = "vsphere://" + uuid;
  if (auto n = client().Create(kube::Nodes(), "", node); !n.ok()) return n.status();
  json csinode = {{"apiVersion", "storage.k8s.io/v1"},
                  {"kind", "CSINode"},
                  {"metadata", {{"name", vm}}},
                  {"spec",
                   {{"drivers",
                     {{{"name", kDriver},
                       {"nodeID", uuid},
                       {"topologyKeys", json::array()},
                       {"allocatable", {{"count", max_volumes}}}}}}}}};
  return client().Create(kube::CsiNodes(), "", csinode).status();
}

absl::StatusOr<ChildProcess*> CsiStack::StartSidecar(const std::string& container,
                                                     const std::string& program,
                                                     const std::vector<std::string>& extra) {
  auto bin = Program(program);
  if (!bin.ok()) return bin.status();
  auto spec = ManifestContainer(overlay_dir_, "vsphere-csi-controller", container);
  if (!spec.ok()) return spec.status();
  auto kc = ServiceAccountKubeconfig("vsphere-csi-controller");
  if (!kc.ok()) return kc.status();
  std::vector<std::string> argv = {*bin, "--kubeconfig=" + *kc};
  for (const std::string& a : spec->args) {
    if (absl::StartsWith(a, "--csi-address=")) {
      argv.push_back("--csi-address=" + socket_);
    } else {
      argv.push_back(a);
    }
  }
  argv.push_back(absl::StrCat("--leader-election-namespace=", kCsiNamespace));
  argv.insert(argv.end(), extra.begin(), extra.end());
  auto p = ChildProcess::Start(argv, dir() + "/" + program);
  if (!p.ok()) return p.status();
  ChildProcess* raw = p->get();
  processes_[program] = *std::move(p);
  return raw;
}

absl::StatusOr<ChildProcess*> CsiStack::StartAdminProgram(const std::string& name,
                                                          const std::string& program,
                                                          const std::vector<std::string>& args) {
  auto bin = Program(program);
  if (!bin.ok()) return bin.status();
  auto p = kube_->StartWithKubeconfig(name, *bin, args);
  if (!p.ok()) return p.status();
  ChildProcess* raw = p->get();
  processes_[name] = *std::move(p);
  return raw;
}

void CsiStack::Stop(const std::string& name) {
  auto it = processes_.find(name);
  if (it == processes_.end()) return;
  it->second->Signal(SIGTERM);
  it->second->WaitExit(absl::Seconds(10));
  processes_.erase(it);
}

ChildProcess* CsiStack::process(const std::string& name) {
  auto it = processes_.find(name);
  return it == processes_.end() ? nullptr : it->second.get();
}

std::string CsiStack::Logs(size_t bytes) {
  std::string out;
  auto tail = [&](const std::string& name, const std::string& text) {
    out += absl::StrCat("\n--- ", name, " ---\n",
                        text.size() > bytes ? text.substr(text.size() - bytes) : text);
  };
  for (auto& [name, p] : processes_) tail(name, p->Stderr());
  if (kube_->controller_manager() != nullptr) {
    tail("kube-controller-manager", kube_->controller_manager()->Stderr());
  }
  return out;
}

}  // namespace ccm::peers
