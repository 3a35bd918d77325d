// Least privilege, checked: the real binary runs a full scenario (leader election, Secret-backed
// credentials, node initialisation, shutdown taint, VM deletion, events, SIGTERM) against the
// emulator, and every API call it made (the emulator's request counters: verb + resource) must be
// allowed by the rules the manifests bind to its ServiceAccount: the ClusterRole and the
// kube-system Role, read from manifests/vsphere-cloud-controller-manager.yaml with yaml-cpp.
// Resources that only the namespaced Role grants are refused (403) cluster-wide for the whole run,
// so a call outside kube-system would break the scenario and show in the log.
#include <gtest/gtest.h>
#include <signal.h>
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "integration/harness.h"

namespace ccm::integration {
namespace {

struct Rule {
  std::set<std::string> groups, resources, verbs;
  bool Allows(const std::string& group, const std::string& resource,
              const std::string& verb) const {
    return (groups.count(group) || groups.count("*")) &&
           (resources.count(resource) || resources.count("*")) &&
           (verbs.count(verb) || verbs.count("*"));
  }
};

struct Rbac {
  std::vector<Rule> cluster;      // ClusterRole system:cloud-controller-manager
  std::vector<Rule> kube_system;  // Role system:cloud-controller-manager in kube-system
};

std::set<std::string> Strings(const YAML::Node& n) {
  std::set<std::string> out;
  if (n && n.IsSequence())
    for (const auto& s : n) out.insert(s.as<std::string>());
  return out;
}

Rbac LoadRbac(const std::string& path) {
  Rbac r;
  for (const YAML::Node& doc : YAML::LoadAllFromFile(path)) {
    if (!doc.IsMap() || !doc["kind"]) continue;
    const std::string kind = doc["kind"].as<std::string>();
    if (kind != "ClusterRole" && kind != "Role") continue;
    if (doc["metadata"]["name"].as<std::string>() != "system:cloud-controller-manager") continue;
    for (const auto& rule : doc["rules"]) {
      Rule x{Strings(rule["apiGroups"]), Strings(rule["resources"]), Strings(rule["verbs"])};
      (kind == "ClusterRole" ? r.cluster : r.kube_system).push_back(x);
    }
  }
  return r;
}

// Emulator counter resource key -> {API group, resource[/subresource]}.
std::pair<std::string, std::string> GroupOf(const std::string& key) {
  std::string res = key, sub;
  if (auto slash = key.find('/'); slash != std::string::npos) {
    res = key.substr(0, slash);
    sub = key.substr(slash);
  }
  if (res == "leases") return {"coordination.k8s.io", res + sub};
  if (res == "events.events.k8s.io") return {"events.k8s.io", "events" + sub};
  return {"", res + sub};
}

bool AnyAllows(const std::vector<Rule>& rules, const std::string& g, const std::string& r,
               const std::string& v) {
  for (const auto& rule : rules)
    if (rule.Allows(g, r, v)) return true;
  return false;
}

TEST(RbacTest, EveryApiCallIsAllowedByTheManifestRoles) {
  const Rbac rbac = LoadRbac(SourceDir() + "/manifests/vsphere-cloud-controller-manager.yaml");
  ASSERT_FALSE(rbac.cluster.empty());
  ASSERT_FALSE(rbac.kube_system.empty());

  auto c = Cluster::Start("rbac");
  ASSERT_TRUE(c.ok()) << c.status();
  Cluster& cl = **c;
  // Resources granted only in kube-system: refuse their cluster-wide paths.
  std::vector<std::string> refused;
  for (const auto& rule : rbac.kube_system) {
    for (const auto& g : rule.groups) {
      for (const auto& res : rule.resources) {
        if (AnyAllows(rbac.cluster, g, res, "list")) continue;
        std::string path = g.empty() ? "/api/v1/" + res : absl::StrCat("/apis/", g, "/v1/", res);
        refused.push_back(path);
        cl.emu().InjectError({.code = 403, .count = -1, .path_substring = path});
      }
    }
  }
  ASSERT_FALSE(refused.empty());
  cl.emu().ResetRequestCounts();

  int port = 0;
  auto p = cl.StartCcm("ccm", &port);
  ASSERT_TRUE(p.ok()) << p.status();
  ChildProcess& ccm = **p;
  for (const char* n : {"node-1", "node-2", "node-3"}) ASSERT_TRUE(cl.RegisterNode(n).ok());
  ASSERT_TRUE(WaitFor(
      [&] {
        return !cl.ProviderId("node-1").empty() && !cl.ProviderId("node-2").empty() &&
               !cl.ProviderId("node-3").empty();
      },
      absl::Seconds(30)))
      << ccm.Stderr();
  // Shut down: node-2's VM powered off (shutdown taint); deleted: node-3's VM destroyed.
  ASSERT_TRUE(cl.vcsim().PowerVm("node-2", false).ok());
  ASSERT_TRUE(cl.MarkNotReady("node-2").ok());
  ASSERT_TRUE(cl.vcsim().DestroyVm("node-3").ok());
  ASSERT_TRUE(cl.MarkNotReady("node-3").ok());
  auto has_shutdown_taint = [&] {
    auto n = cl.emu().Get("nodes", "", "node-2");
    return n.ok() && absl::StrContains(n->dump(), "node.cloudprovider.kubernetes.io/shutdown");
  };
  ASSERT_TRUE(
      WaitFor([&] { return has_shutdown_taint() && !cl.NodeExists("node-3"); }, absl::Seconds(30)))
      << ccm.Stderr();
  ccm.Signal(SIGTERM);
  ASSERT_EQ(ccm.WaitExit(absl::Seconds(10)), 0) << ccm.Stderr();
  EXPECT_EQ(cl.LeaseHolder(), "");

  const std::string err = ccm.Stderr();
  EXPECT_FALSE(absl::StrContains(err, "forbidden")) << "a refused cluster-wide call:\n" << err;
  std::vector<std::string> denied, seen;
  for (const auto& [key, count] : cl.emu().RequestCounts()) {
    if (key == "get discovery") continue;  // non-resource URLs, allowed to every authenticated user
    std::vector<std::string> vr = absl::StrSplit(key, absl::MaxSplits(' ', 1));
    ASSERT_EQ(vr.size(), 2u) << key;
    if (vr[1] == "other") {
      denied.push_back(key + " (not a resource path)");
      continue;
    }
    auto [group, resource] = GroupOf(vr[1]);
    seen.push_back(key);
    if (!AnyAllows(rbac.cluster, group, resource, vr[0]) &&
        !AnyAllows(rbac.kube_system, group, resource, vr[0]))
      denied.push_back(absl::StrCat(vr[0], " ", resource, " (group \"", group, "\") x", count));
  }
  std::cout << "API calls made: " << absl::StrJoin(seen, ", ") << "\n";
  EXPECT_TRUE(denied.empty()) << "calls not covered by the manifests' ClusterRole/Role:\n  "
                              << absl::StrJoin(denied, "\n  ");
  // The scenario exercised what the roles are for.
  for (const char* want :
       {"watch nodes", "patch nodes", "delete nodes", "get secrets", "update leases"}) {
    bool found = false;
    for (const auto& s : seen) found = found || absl::StartsWith(s, want);
    if (!found && std::string(want) == "get secrets") {
      for (const auto& s : seen) found = found || absl::StartsWith(s, "list secrets");
    }
    EXPECT_TRUE(found) << "scenario did not make a \"" << want << "\" call";
  }
}

}  // namespace
}  // namespace ccm::integration
