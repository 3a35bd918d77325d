// The CSI driver's deployment files against the API emulator (kubectl's client-side dry run, with
// its validation), and the least-privilege promise of the node plugin's RBAC, read from the
// rendered manifest with yaml-cpp.
#include <stdlib.h>
#include <sys/wait.h>
#include <yaml-cpp/yaml.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cloud/config/config.h"
#include "common/run_command.h"
#include "csi/core/topology.h"
#include "fixtures/kube_emulator/kube_emulator.h"
#include "gtest/gtest.h"

namespace ccm::csi {
namespace {

constexpr char kManifest[] = CCM_SOURCE_DIR "/manifests/vsphere-csi-driver.yaml";

class CsiDeployTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/csi-deploy-XXXXXX";
    dir_ = mkdtemp(tmpl);
    ASSERT_TRUE(emu_.Start().ok());
    ASSERT_TRUE(emu_.WriteKubeconfig(dir_ + "/kubeconfig").ok());
  }
  void TearDown() override {
    emu_.Stop();
    std::filesystem::remove_all(dir_);
  }
  // `flag` "-f" (a file) or "-k" (a kustomization); returns kubectl's output after asserting
  // success.
  std::string DryRun(const std::string& flag, const std::string& path) {
    absl::StatusOr<CommandResult> r = RunCommand(
        {"kubectl", "--kubeconfig", dir_ + "/kubeconfig", "apply", "--dry-run=client", flag, path});
    if (!r.ok()) {
      ADD_FAILURE() << r.status();
      return "";
    }
    EXPECT_EQ(r->exit_code, 0) << path << ":\n" << r->output;
    EXPECT_FALSE(absl::StrContains(r->output, "error")) << path << ":\n" << r->output;
    return r->output;
  }

  testing::KubeEmulator emu_;
  std::string dir_;
};

std::string ReadExample(const std::string& name) {
  std::ifstream in(std::string(CCM_SOURCE_DIR "/deploy/csi/examples/") + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST_F(CsiDeployTest, RenderedManifestApplies) {
  const std::string out = DryRun("-f", kManifest);
  for (const char* obj :
       {"namespace/vmware-system-csi", "csidriver.storage.k8s.io/csi.vsphere.vmware.com",
        "serviceaccount/vsphere-csi-controller", "serviceaccount/vsphere-csi-node",
        "clusterrole.rbac.authorization.k8s.io/vsphere-csi-controller-role",
        "clusterrole.rbac.authorization.k8s.io/vsphere-csi-node-cluster-role",
        "clusterrolebinding.rbac.authorization.k8s.io/vsphere-csi-controller-binding",
        "clusterrolebinding.rbac.authorization.k8s.io/vsphere-csi-node-cluster-role-binding",
        "role.rbac.authorization.k8s.io/vsphere-csi-controller-leases",
        "rolebinding.rbac.authorization.k8s.io/vsphere-csi-controller-leases",
        "service/vsphere-csi-controller", "deployment.apps/vsphere-csi-controller",
        "daemonset.apps/vsphere-csi-node"}) {
    EXPECT_TRUE(absl::StrContains(out, obj)) << obj << " missing from:\n" << out;
  }
  // Issue 42 item 1: no Secret, in the manifest or any overlay: applying them over an installed
  // driver must never replace the cluster's csi-vsphere.conf (the reference ships none either).
  EXPECT_FALSE(absl::StrContains(out, "secret/")) << out;
  for (const auto& e :
       std::filesystem::directory_iterator(CCM_SOURCE_DIR "/deploy/csi/kustomize/overlays")) {
    const std::string overlay = DryRun("-k", e.path().string());
    EXPECT_FALSE(absl::StrContains(overlay, "secret/")) << e.path() << ":\n" << overlay;
  }
}

TEST_F(CsiDeployTest, EveryOverlayApplies) {
  int overlays = 0;
  for (const auto& e :
       std::filesystem::directory_iterator(CCM_SOURCE_DIR "/deploy/csi/kustomize/overlays")) {
    const std::string out = DryRun("-k", e.path().string());
    EXPECT_TRUE(absl::StrContains(out, "deployment.apps/vsphere-csi-controller")) << out;
    ++overlays;
  }
  EXPECT_GE(overlays, 2);
  // The zones overlay as the reference's: the node plugins get no config (CSINodeTopology).
  const std::string zones = DryRun("-k", CCM_SOURCE_DIR "/deploy/csi/kustomize/overlays/zones");
  EXPECT_FALSE(absl::StrContains(zones, "configmap/vsphere-csi-node-config")) << zones;
  EXPECT_TRUE(absl::StrContains(zones, "csinodetopologies.cns.vmware.com")) << zones;
}

TEST(CsiExampleConfigTest, TheSecretsExampleFileParses) {
  auto conf = cloud::ParseConfig(ReadExample("csi-vsphere.conf"), {});
  ASSERT_TRUE(conf.ok()) << conf.status();
  EXPECT_EQ(conf->config.vcenters.size(), 1u);
}

TEST_F(CsiDeployTest, ExampleStorageClassesApply) {
  const std::string out = DryRun("-f", CCM_SOURCE_DIR "/deploy/csi/examples/storageclasses.yaml");
  for (const char* sc :
       {"vsphere-datastore", "vsphere-default", "vsphere-policy", "vsphere-zonal"}) {
    EXPECT_TRUE(absl::StrContains(out, absl::StrCat("storageclass.storage.k8s.io/", sc))) << out;
  }
}

// The containers of a workload in the rendered manifest, by name.
std::map<std::string, YAML::Node> ContainersOf(const std::string& kind, const std::string& name) {
  std::map<std::string, YAML::Node> out;
  for (const auto& d : YAML::LoadAllFromFile(kManifest)) {
    if (!d.IsMap() || !d["kind"] || d["kind"].as<std::string>() != kind ||
        d["metadata"]["name"].as<std::string>() != name) {
      continue;
    }
    for (const auto& c : d["spec"]["template"]["spec"]["containers"]) {
      out.emplace(c["name"].as<std::string>(), static_cast<const YAML::Node&>(c));
    }
  }
  return out;
}

std::map<std::string, std::string> EnvOf(const YAML::Node& container) {
  std::map<std::string, std::string> out;
  for (const auto& e : container["env"]) {
    out[e["name"].as<std::string>()] =
        e["value"] ? e["value"].as<std::string>()
                   : e["valueFrom"]["fieldRef"]["fieldPath"].as<std::string>("");
  }
  return out;
}

// Issue 42 item 2: what the reference's vanilla manifest gives each of our containers. The
// syncer reads the cluster-id ConfigMap in CSI_NAMESPACE (without it, outside vmware-system-csi,
// it read the wrong namespace); container port names are unique in a pod (Kubernetes warns of
// duplicates and a named port reference is ambiguous).
TEST(CsiManifestTest, ContainersHaveTheReferencesEnvAndUniquePortNames) {
  struct Want {
    std::string kind, workload, container;
    std::map<std::string, std::string> env;
  } wants[] = {
      {"Deployment",
       "vsphere-csi-controller",
       "vsphere-csi-controller",
       {{"X_CSI_MODE", "controller"},
        {"VSPHERE_CSI_CONFIG", "/etc/cloud/csi-vsphere.conf"},
        {"CSI_NAMESPACE", "metadata.namespace"}}},
      {"Deployment",
       "vsphere-csi-controller",
       "vsphere-syncer",
       {{"X_CSI_MODE", "syncer"},
        {"FULL_SYNC_INTERVAL_MINUTES", "30"},
        {"VSPHERE_CSI_CONFIG", "/etc/cloud/csi-vsphere.conf"},
        {"CSI_NAMESPACE", "metadata.namespace"}}},
      {"DaemonSet",
       "vsphere-csi-node",
       "vsphere-csi-node",
       {{"X_CSI_MODE", "node"},
        {"NODE_NAME", "spec.nodeName"},
        {"CSI_NAMESPACE", "metadata.namespace"}}},
  };
  for (const Want& w : wants) {
    auto containers = ContainersOf(w.kind, w.workload);
    ASSERT_TRUE(containers.count(w.container)) << w.workload << "/" << w.container;
    const auto env = EnvOf(containers[w.container]);
    for (const auto& [k, v] : w.env) {
      auto it = env.find(k);
      ASSERT_NE(it, env.end()) << w.container << " lacks " << k;
      EXPECT_EQ(it->second, v) << w.container << " " << k;
    }
  }
  for (const auto& [kind, workload] :
       {std::pair<std::string, std::string>{"Deployment", "vsphere-csi-controller"},
        {"DaemonSet", "vsphere-csi-node"}}) {
    std::map<std::string, std::string> port_owner;
    for (const auto& [name, c] : ContainersOf(kind, workload)) {
      for (const auto& p : c["ports"]) {
        if (!p["name"]) continue;
        const std::string port = p["name"].as<std::string>();
        EXPECT_TRUE(port_owner.emplace(port, name).second)
            << workload << ": port name " << port << " of " << name << " and " << port_owner[port];
      }
    }
  }
  auto controller = ContainersOf("Deployment", "vsphere-csi-controller");
  EXPECT_EQ(controller["vsphere-syncer"]["ports"][0]["name"].as<std::string>(), "prometheus-sync");
  EXPECT_EQ(controller["vsphere-csi-controller"]["ports"][1]["name"].as<std::string>(),
            "prometheus");
}

TEST(CsiZonesOverlayTest, TheSecretsTopologyGivesTheCategoryKeys) {
  // The controller's and the syncer's file (the node plugins get none: CSINodeTopology).
  auto controller = cloud::ParseConfig(ReadExample("csi-vsphere-zones.conf"), {});
  ASSERT_TRUE(controller.ok()) << controller.status();
  TopologyConfig t;
  t.topology_categories = controller->config.labels.topology_categories;
  EXPECT_EQ(TopologyKeys(t), (std::vector<std::string>{"topology.csi.vmware.com/k8s-region",
                                                       "topology.csi.vmware.com/k8s-zone"}));
}

struct Rule {
  std::set<std::string> groups, resources, verbs, names;
};

std::set<std::string> Strings(const YAML::Node& n) {
  std::set<std::string> out;
  if (n && n.IsSequence())
    for (const auto& s : n) out.insert(s.as<std::string>());
  return out;
}

// Every rule of every (Cluster)Role bound to the ServiceAccount vmware-system-csi/<sa>.
std::vector<Rule> RulesOf(const std::string& sa) {
  std::vector<YAML::Node> docs = YAML::LoadAllFromFile(kManifest);
  std::set<std::pair<std::string, std::string>> bound;  // (kind, name) of the roles
  for (const auto& d : docs) {
    if (!d.IsMap() || !d["kind"]) continue;
    const std::string kind = d["kind"].as<std::string>();
    if (kind != "ClusterRoleBinding" && kind != "RoleBinding") continue;
    for (const auto& s : d["subjects"]) {
      if (s["kind"].as<std::string>() == "ServiceAccount" && s["name"].as<std::string>() == sa &&
          s["namespace"].as<std::string>() == "vmware-system-csi") {
        bound.insert(
            {d["roleRef"]["kind"].as<std::string>(), d["roleRef"]["name"].as<std::string>()});
      }
    }
  }
  std::vector<Rule> rules;
  for (const auto& d : docs) {
    if (!d.IsMap() || !d["kind"] || !d["metadata"]) continue;
    if (!bound.count({d["kind"].as<std::string>(), d["metadata"]["name"].as<std::string>()}))
      continue;
    for (const auto& r : d["rules"]) {
      rules.push_back({Strings(r["apiGroups"]), Strings(r["resources"]), Strings(r["verbs"]),
                       Strings(r["resourceNames"])});
    }
  }
  return rules;
}

// The node plugin reads its own Node (get; RBAC cannot narrow it to "its own") and the
// feature-state ConfigMap (the reference's vsphere-csi-node-role), and the node-driver-registrar
// needs no API access: nothing else may be granted.
TEST(CsiRbacTest, NodePluginMayOnlyGetNodesReadConfigMapsAndKeepItsCsiNodeTopology) {
  const std::vector<Rule> rules = RulesOf("vsphere-csi-node");
  ASSERT_FALSE(rules.empty()) << "no role bound to vmware-system-csi/vsphere-csi-node";
  for (const Rule& r : rules) {
    if (r.resources == std::set<std::string>{"csinodetopologies"}) {
      EXPECT_EQ(r.groups, std::set<std::string>{"cns.vmware.com"});
      EXPECT_EQ(r.verbs, (std::set<std::string>{"create", "get", "patch", "watch"}));
      continue;
    }
    EXPECT_EQ(r.groups, std::set<std::string>{""});
    if (r.resources == std::set<std::string>{"configmaps"}) {
      EXPECT_EQ(r.verbs, (std::set<std::string>{"get", "list", "watch"}));
    } else {
      EXPECT_EQ(r.resources, std::set<std::string>{"nodes"});
      EXPECT_EQ(r.verbs, std::set<std::string>{"get"});
    }
  }
}

bool Grants(const std::vector<Rule>& rules, const std::string& group, const std::string& resource,
            const std::string& verb) {
  for (const Rule& r : rules) {
    if (r.groups.count(group) && r.resources.count(resource) && r.verbs.count(verb)) return true;
  }
  return false;
}

// Issue 42 item 2: the reference's vanilla manifest (kubernetes-sigs/vsphere-csi-driver,
// manifests/vanilla/vsphere-csi-driver.yaml, read 2026-11-28), as a table written here: every
// object, every RBAC rule and every container's feature-state flags it has, and each intended
// difference with its reason. A reference object or rule that ours lacks without a reason fails.
TEST(CsiManifestTest, TheReferencesObjectsRulesAndFlags) {
  struct Object {
    std::string kind, name, difference;  // difference: "" = ours has it under this name
  };
  const std::vector<Object> objects = {
      {"CSIDriver", "csi.vsphere.vmware.com", ""},
      {"ServiceAccount", "vsphere-csi-controller", ""},
      {"ClusterRole", "vsphere-csi-controller-role", ""},
      {"ClusterRoleBinding", "vsphere-csi-controller-binding", ""},
      {"ServiceAccount", "vsphere-csi-node", ""},
      {"ClusterRole", "vsphere-csi-node-cluster-role", ""},
      {"ClusterRoleBinding", "vsphere-csi-node-cluster-role-binding", ""},
      {"Role", "vsphere-csi-node-role", ""},
      {"RoleBinding", "vsphere-csi-node-binding", ""},
      {"ConfigMap", "internal-feature-states.csi.vsphere.vmware.com", ""},
      {"Service", "vsphere-csi-controller", ""},
      {"Deployment", "vsphere-csi-controller", ""},
      {"DaemonSet", "vsphere-csi-node", ""},
      {"DaemonSet", "vsphere-csi-node-windows", "no Windows node plugin (docs/differences.md)"},
  };
  std::set<std::pair<std::string, std::string>> ours;
  for (const YAML::Node& d : YAML::LoadAllFromFile(kManifest)) {
    if (d.IsMap() && d["kind"] && d["metadata"])
      ours.insert({d["kind"].as<std::string>(), d["metadata"]["name"].as<std::string>()});
  }
  for (const Object& o : objects) {
    if (o.difference.empty()) {
      EXPECT_TRUE(ours.count({o.kind, o.name})) << o.kind << " " << o.name;
    }
  }

  struct RefRule {
    std::string sa, group, resource;
    std::vector<std::string> verbs;
    std::string difference;
  };
  const std::string c = "vsphere-csi-controller", n = "vsphere-csi-node";
  const std::string ns_only = "granted in vmware-system-csi only (a Role)";
  const std::vector<RefRule> rules = {
      {c, "", "nodes", {"get", "list", "watch"}, ""},
      {c, "", "pods", {"get", "list", "watch"}, ""},
      {c, "", "configmaps", {"get", "list", "watch", "create"}, ns_only},
      {c, "", "persistentvolumeclaims", {"get", "list", "watch", "update"}, ""},
      {c, "", "persistentvolumeclaims/status", {"patch"}, ""},
      {c, "", "persistentvolumes", {"get", "list", "watch", "create", "delete", "patch"}, ""},
      {c, "", "persistentvolumes", {"update"}, "nothing of ours updates a PV whole"},
      {c, "", "events", {"list", "watch", "create", "update", "patch"}, ""},
      {c, "", "events", {"get"}, "no container reads one Event"},
      {c,
       "coordination.k8s.io",
       "leases",
       {"get", "watch", "list", "delete", "update", "create"},
       ns_only},
      {c, "storage.k8s.io", "storageclasses", {"get", "list", "watch"}, ""},
      {c, "storage.k8s.io", "csinodes", {"get", "list", "watch"}, ""},
      {c, "storage.k8s.io", "volumeattachments", {"get", "list", "watch", "patch"}, ""},
      {c, "storage.k8s.io", "volumeattachments/status", {"patch"}, ""},
      {c,
       "cns.vmware.com",
       "triggercsifullsyncs",
       {"create", "get", "update", "watch", "list"},
       ""},
      {c,
       "cns.vmware.com",
       "cnsvspherevolumemigrations",
       {"create", "get", "list", "watch", "update", "delete"},
       ""},
      {c,
       "cns.vmware.com",
       "cnsvolumeinfoes",
       {"create", "get", "list", "watch", "delete"},
       ns_only},
      {c,
       "apiextensions.k8s.io",
       "customresourcedefinitions",
       {"get", "create", "update"},
       "the CRDs are applied with the manifest, not created at run time"},
      {c,
       "cns.vmware.com",
       "cnsvolumeoperationrequests",
       {"create", "get", "list", "update", "delete"},
       ns_only},
      {c, "snapshot.storage.k8s.io", "volumesnapshots", {"get", "list"}, ""},
      {c, "snapshot.storage.k8s.io", "volumesnapshotclasses", {"watch", "get", "list"}, ""},
      {c,
       "snapshot.storage.k8s.io",
       "volumesnapshotcontents",
       {"create", "get", "list", "watch", "update", "delete", "patch"},
       ""},
      {c, "snapshot.storage.k8s.io", "volumesnapshotcontents/status", {"update", "patch"}, ""},
      {c, "cns.vmware.com", "csinodetopologies", {"get", "update", "watch", "list"}, ""},
      {n, "cns.vmware.com", "csinodetopologies", {"create", "watch", "get", "patch"}, ""},
      {n, "", "nodes", {"get"}, ""},
      {n, "", "configmaps", {"get", "list", "watch"}, ""},
  };
  const std::vector<Rule> controller = RulesOf(c), node = RulesOf(n);
  for (const RefRule& r : rules) {
    for (const std::string& verb : r.verbs) {
      const bool granted = Grants(r.sa == c ? controller : node, r.group, r.resource, verb);
      if (r.difference.empty()) {
        EXPECT_TRUE(granted) << r.sa << " may not " << verb << " " << r.resource;
      } else if (r.difference != ns_only) {
        EXPECT_FALSE(granted) << r.sa << " " << verb << " " << r.resource
                              << ": listed as a difference (" << r.difference << ")";
      }
    }
  }

  // Every driver container: the reference's feature-state flags.
  for (const auto& [kind, workload, container] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"Deployment", c, "vsphere-csi-controller"},
           {"Deployment", c, "vsphere-syncer"},
           {"DaemonSet", n, "vsphere-csi-node"}}) {
    auto containers = ContainersOf(kind, workload);
    std::set<std::string> args = Strings(containers[container]["args"]);
    EXPECT_TRUE(args.count("--fss-name=internal-feature-states.csi.vsphere.vmware.com"))
        << container;
    EXPECT_TRUE(args.count("--fss-namespace=$(CSI_NAMESPACE)")) << container;
    // The reference no longer sets MAX_VOLUMES_PER_NODE: the feature state decides.
    EXPECT_FALSE(EnvOf(containers[container]).count("MAX_VOLUMES_PER_NODE")) << container;
  }
}

// The controller's ServiceAccount may not read Secrets (credentials come from the mounted
// csi-vsphere.conf) or write Nodes, and no rule uses a wildcard.
TEST(CsiRbacTest, ControllerHasNoWildcardsSecretsOrNodeWrites) {
  const std::vector<Rule> rules = RulesOf("vsphere-csi-controller");
  ASSERT_FALSE(rules.empty());
  for (const Rule& r : rules) {
    for (const auto* set : {&r.groups, &r.resources, &r.verbs}) EXPECT_FALSE(set->count("*"));
    EXPECT_FALSE(r.resources.count("secrets"));
    if (r.resources.count("nodes")) {
      EXPECT_EQ(r.verbs, (std::set<std::string>{"get", "list", "watch"}));
    }
  }
}

}  // namespace
}  // namespace ccm::csi
