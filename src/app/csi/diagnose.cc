#include "app/csi/diagnose.h"

#include <cstdio>
#include <map>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "app/csi/config.h"
#include "app/csi/diagnose_volumes.h"
#include "app/shared/diagnose_cli.h"
#include "app/shared/diagnose_cluster.h"
#include "cloud/credentials/credential_store.h"
#include "csi/controller/controller_backend.h"
#include "csi/controller/host_topology.h"
#include "csi/core/constants.h"
#include "csi/crd/csinodetopology.h"
#include "diagnose/config_checks.h"
#include "kube/errors.h"
#include "kube/objects.h"
#include "kube/resource.h"

namespace ccm::app {
namespace {

struct CsiDiagnoseFlags {
  std::string kubeconfig, master;
};

// --kubeconfig / --master (as the syncer takes them); KUBECONFIG otherwise (as the node plugin).
std::optional<CsiDiagnoseFlags> ParseFlags(const std::vector<std::string>& rest,
                                           const std::map<std::string, std::string>& env) {
  CsiDiagnoseFlags f;
  if (auto it = env.find("KUBECONFIG"); it != env.end()) f.kubeconfig = it->second;
  for (size_t i = 1; i < rest.size(); ++i) {
    if (absl::StartsWith(rest[i], "--kubeconfig=")) {
      f.kubeconfig = rest[i].substr(13);
    } else if (absl::StartsWith(rest[i], "--master=")) {
      f.master = rest[i].substr(9);
    } else {
      fprintf(stderr,
              "diagnose: unknown argument \"%s\" (the driver reads VSPHERE_CSI_CONFIG; "
              "--kubeconfig=, --master= are accepted)\n",
              rest[i].c_str());
      return std::nullopt;
    }
  }
  return f;
}

constexpr char kConfigSecret[] = "vsphere-config-secret";
constexpr char kConfigKey[] = "csi-vsphere.conf";

// The Secret the driver's pods mount csi-vsphere.conf from (the reference's name and key). The
// manifests ship none, as the reference's, so that applying them never replaces a cluster's
// config: the operator creates it, and a missing one leaves every driver pod ContainerCreating.
void CheckConfigSecret(kube::RestClient& api, const std::string& ns, diagnose::Report& report) {
  const std::string where = absl::StrCat(ns, "/", kConfigSecret);
  const std::string create = absl::StrCat("kubectl create secret generic ", kConfigSecret,
                                          " --from-file=", kConfigKey, " --namespace=", ns);
  absl::StatusOr<kube::Json> secret = api.Get(kube::Secrets(), ns, kConfigSecret);
  if (kube::IsNotFoundError(secret.status())) {
    report.Error("secret",
                 absl::StrCat("Secret ", where, " not found: the driver's pods cannot mount ",
                              kConfigKey, " and do not start"),
                 create);
    return;
  }
  if (!secret.ok()) {
    report.Warn("secret",
                absl::StrCat("cannot read Secret ", where, ": ", secret.status().message()),
                "check the API server and that this user may get secrets in " + ns);
    return;
  }
  const kube::Json data = secret->value("data", kube::Json::object());
  if (!data.contains(kConfigKey)) {
    std::vector<std::string> keys;
    for (const auto& [k, v] : data.items()) keys.push_back(k);
    report.Error(
        "secret",
        absl::StrCat("Secret ", where, " has no key ", kConfigKey,
                     " (its keys: ", keys.empty() ? "none" : absl::StrJoin(keys, ", "), ")"),
        absl::StrCat("delete it and create it from a file named ", kConfigKey, ": ", create));
    return;
  }
  report.Ok("secret", absl::StrCat("Secret ", where, " holds ", kConfigKey));
}

// What the CSI driver knows of each Node besides the Node: the node ID this driver reported in its
// CSINode, and its CSINodeTopology (none when the CRD is not installed).
void AddCsiNodeFacts(kube::Client& api, std::vector<diagnose::NodeFacts>& facts) {
  std::map<std::string, diagnose::NodeFacts*> by_name;
  for (diagnose::NodeFacts& f : facts) by_name[f.name] = &f;
  if (absl::StatusOr<std::vector<kube::Json>> all = ListAll(api, kube::CsiNodes()); all.ok()) {
    for (const kube::Json& n : *all) {
      auto it = by_name.find(kube::Name(n));
      if (it == by_name.end()) continue;
      for (const kube::Json& d : n.value("/spec/drivers"_json_pointer, kube::Json::array())) {
        if (d.value("name", "") == csi::kDriverName)
          it->second->csi_node_id = d.value("nodeID", "");
      }
    }
  }
  if (auto all = ListAll(api, csi::CsiNodeTopologies()); all.ok()) {
    for (const kube::Json& o : *all) {
      const csi::CsiNodeTopology t = csi::ParseCsiNodeTopology(o);
      auto it = by_name.find(t.name);
      if (it == by_name.end()) continue;
      it->second->topology = diagnose::NodeFacts::Topology{t.status.status, t.status.error_message};
    }
  }
}

bool MultiNode(const kube::Json& spec) {
  for (const kube::Json& m : spec.value("accessModes", kube::Json::array())) {
    if (m == "ReadWriteMany" || m == "ReadOnlyMany") return true;
  }
  return false;
}

// File volumes are in use when csi-vsphere.conf has their settings, or the cluster has a PV of
// this driver or a claim of one of its StorageClasses with a multi-node access mode.
bool FileVolumesInUse(kube::RestClient* api, const cloud::Config& config) {
  if (!config.net_permissions.empty()) return true;
  for (const cloud::VirtualCenterConfig& vc : config.vcenters) {
    if (!vc.target_vsan_file_share_datastore_urls.empty() ||
        !vc.target_vsan_file_share_clusters.empty()) {
      return true;
    }
  }
  if (api == nullptr) return false;
  if (auto pvs = ListAll(*api, kube::PersistentVolumes()); pvs.ok()) {
    for (const kube::Json& pv : *pvs) {
      const kube::Json spec = pv.value("spec", kube::Json::object());
      if (spec.value("/csi/driver"_json_pointer, "") == csi::kDriverName && MultiNode(spec)) {
        return true;
      }
    }
  }
  std::set<std::string> classes;
  if (auto all = ListAll(*api, kube::StorageClasses()); all.ok()) {
    for (const kube::Json& sc : *all) {
      if (sc.value("provisioner", "") == csi::kDriverName) classes.insert(kube::Name(sc));
    }
  }
  if (auto claims = ListAll(*api, kube::PersistentVolumeClaims()); claims.ok()) {
    for (const kube::Json& pvc : *claims) {
      const kube::Json spec = pvc.value("spec", kube::Json::object());
      if (classes.contains(spec.value("storageClassName", "")) && MultiNode(spec)) return true;
    }
  }
  return false;
}

void DiagnoseCluster(std::shared_ptr<kube::RestClient> api, const cloud::Config& config,
                     diagnose::Report& report) {
  std::optional<std::vector<kube::Json>> nodes;
  if (api) nodes = DiagnoseListNodes(*api, report);
  cloud::CredentialStore creds(config, nullptr);  // the driver's credentials are in its config
  (void)creds.Start();
  diagnose::VcenterCheckOptions vo;
  vo.component = diagnose::Component::kCsi;
  if (nodes) vo.node_vm_uuids = NodeVmUuids(*nodes);
  vo.tag_categories = csi::CategoriesOf(csi::TopologyOf(config)).categories;
  vo.file_volumes = FileVolumesInUse(api.get(), config);
  const bool vcenters_ok = DiagnoseVcenters(config, creds, vo, report);
  creds.Stop();
  if (!nodes) return;
  std::vector<diagnose::NodeFacts> facts;
  for (const kube::Json& n : *nodes) facts.push_back(NodeFactsOf(n));
  AddCsiNodeFacts(*api, facts);
  diagnose::NodeCheckContext c;
  c.component = diagnose::Component::kCsi;
  c.zones_configured = csi::ModeOf(csi::TopologyOf(config)) != csi::TopologyMode::kNone;
  c.zone_category = config.labels.zone;
  c.region_category = config.labels.region;
  diagnose::JudgeNodes(facts, c, report);
  if (vcenters_ok) {
    DiagnoseVolumes(config, api, *nodes, report);
  } else {
    report.Warn("volumes", "volume checks skipped: a vCenter check failed",
                "fix the vCenter errors above");
  }
}

}  // namespace

int RunCsiDiagnose(const std::vector<std::string>& args,
                   const std::map<std::string, std::string>& env) {
  std::optional<DiagnoseArgs> d = DiagnoseArgsOrComplain(args);
  if (!d) return 2;
  std::optional<CsiDiagnoseFlags> flags = ParseFlags(d->rest, env);
  if (!flags) return 2;
  std::string path = "/etc/cloud/csi-vsphere.conf";
  if (auto it = env.find("VSPHERE_CSI_CONFIG"); it != env.end() && !it->second.empty()) {
    path = it->second;
  }
  std::string ns = "vmware-system-csi";
  if (auto it = env.find("CSI_NAMESPACE"); it != env.end() && !it->second.empty()) ns = it->second;
  diagnose::Report report;
  absl::StatusOr<cloud::ParseResult> parsed = ReadCsiConfig(path, env);
  diagnose::CheckConfig(path, parsed, report);
  std::shared_ptr<kube::RestClient> api =
      DiagnoseKubeClient(flags->master, flags->kubeconfig, report);
  if (api) CheckConfigSecret(*api, ns, report);
  if (parsed.ok()) DiagnoseCluster(api, parsed->config, report);
  return PrintReport(report, d->json);
}

}  // namespace ccm::app
