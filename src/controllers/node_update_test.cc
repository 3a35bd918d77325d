#include "controllers/node_update.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ccm::controllers {
namespace {

using cloud::NodeAddressType;
using kube::Json;

// A Node as a kubelet with --cloud-provider=external registers it.
Json KubeletNode() {
  return Json::parse(R"({
    "apiVersion": "v1", "kind": "Node",
    "metadata": {"name": "worker-1", "uid": "u1", "resourceVersion": "7",
                 "labels": {"kubernetes.io/hostname": "worker-1"},
                 "annotations": {"alpha.kubernetes.io/provided-node-ip": "10.0.0.5"}},
    "spec": {"podCIDR": "10.244.1.0/24",
             "taints": [{"key": "node.cloudprovider.kubernetes.io/uninitialized", "value": "true",
                         "effect": "NoSchedule"},
                        {"key": "dedicated", "value": "db", "effect": "NoExecute"}]},
    "status": {"nodeInfo": {"systemUUID": "56492e42-22ad-3911-6d72-59cc8f26bc90"},
               "conditions": [{"type": "Ready", "status": "False"}]}
  })");
}

cloud::InstanceMetadata Metadata() {
  cloud::InstanceMetadata md;
  md.provider_id = "vsphere://422e4956-ad22-1139-6d72-59cc8f26bc90";
  md.instance_type = "vsphere-vm.cpu-4.mem-8gb.os-ubuntu";
  md.zone = "zone-a";
  md.region = "region-1";
  md.node_addresses = {{NodeAddressType::kHostname, "worker-1"},
                       {NodeAddressType::kInternalIP, "10.0.0.5"},
                       {NodeAddressType::kExternalIP, "10.0.0.5"}};
  return md;
}

const std::vector<kube::NodeAddress> kAddresses = {
    {"Hostname", "worker-1"}, {"InternalIP", "10.0.0.5"}, {"ExternalIP", "10.0.0.5"}};

struct Case {
  std::string name;
  std::function<void(Json&)> node_edit;
  std::function<void(cloud::InstanceMetadata&)> md_edit;
  std::map<std::string, std::string> extra;
  bool want_node_change;
  std::map<std::string, std::string> want_labels;  // subset checked (when want_node_change)
  std::vector<std::string> want_absent_labels;
  std::string want_provider_id;
  std::optional<std::vector<kube::NodeAddress>> want_addresses;
};

void NoEdit(Json&) {}
void NoMd(cloud::InstanceMetadata&) {}

std::vector<Case> Cases() {
  const std::string pid = Metadata().provider_id;
  return {
      {"fresh kubelet node",
       NoEdit,
       NoMd,
       {},
       true,
       {{"node.kubernetes.io/instance-type", "vsphere-vm.cpu-4.mem-8gb.os-ubuntu"},
        {"beta.kubernetes.io/instance-type", "vsphere-vm.cpu-4.mem-8gb.os-ubuntu"},
        {"topology.kubernetes.io/zone", "zone-a"},
        {"failure-domain.beta.kubernetes.io/zone", "zone-a"},
        {"topology.kubernetes.io/region", "region-1"},
        {"failure-domain.beta.kubernetes.io/region", "region-1"},
        {"kubernetes.io/hostname", "worker-1"}},
       {},
       pid,
       kAddresses},
      {"providerID already set is kept",
       [](Json& n) { n["spec"]["providerID"] = "vsphere://other"; },
       NoMd,
       {},
       true,
       {},
       {},
       "vsphere://other",
       kAddresses},
      {"extras added where absent, never overwrite",
       [](Json& n) { n["metadata"]["labels"]["team"] = "blue"; },
       NoMd,
       {{"team", "red"}, {"env", "prod"}, {"node.kubernetes.io/instance-type", "x"}},
       true,
       {{"team", "blue"},
        {"env", "prod"},
        {"node.kubernetes.io/instance-type", "vsphere-vm.cpu-4.mem-8gb.os-ubuntu"}},
       {},
       pid,
       kAddresses},
      {"additional labels never overwrite",
       [](Json& n) { n["metadata"]["labels"]["a"] = "mine"; },
       [](cloud::InstanceMetadata& m) {
         m.additional_labels = {{"a", "theirs"}, {"b", "new"}};
       },
       {},
       true,
       {{"a", "mine"}, {"b", "new"}},
       {},
       pid,
       kAddresses},
      {"provider labels follow the VM",
       [](Json& n) { n["metadata"]["labels"]["topology.kubernetes.io/zone"] = "old"; },
       NoMd,
       {},
       true,
       {{"topology.kubernetes.io/zone", "zone-a"}},
       {},
       pid,
       kAddresses},
      {"no zones configured: no zone labels",
       NoEdit,
       [](cloud::InstanceMetadata& m) { m.zone = m.region = ""; },
       {},
       true,
       {},
       {"topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone",
        "topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region"},
       pid,
       kAddresses},
      {"addresses equal: none to patch",
       [](Json& n) {
         n["status"]["addresses"] = Json::parse(
             R"([{"type":"Hostname","address":"worker-1"},{"type":"InternalIP","address":"10.0.0.5"},
                 {"type":"ExternalIP","address":"10.0.0.5"}])");
       },
       NoMd,
       {},
       true,
       {},
       {},
       pid,
       std::nullopt},
      {"addresses in another order are rewritten",
       [](Json& n) {
         n["status"]["addresses"] = Json::parse(
             R"([{"type":"InternalIP","address":"10.0.0.5"},{"type":"Hostname","address":"worker-1"},
                 {"type":"ExternalIP","address":"10.0.0.5"}])");
       },
       NoMd,
       {},
       true,
       {},
       {},
       pid,
       kAddresses},
      {"no addresses from the provider: keep the kubelet's",
       NoEdit,
       [](cloud::InstanceMetadata& m) { m.node_addresses.clear(); },
       {},
       true,
       {},
       {},
       pid,
       std::nullopt},
      {"dual stack",
       NoEdit,
       [](cloud::InstanceMetadata& m) {
         m.node_addresses.push_back({NodeAddressType::kInternalIP, "fd00::5"});
       },
       {},
       true,
       {},
       {},
       pid,
       std::vector<kube::NodeAddress>{{"Hostname", "worker-1"},
                                      {"InternalIP", "10.0.0.5"},
                                      {"ExternalIP", "10.0.0.5"},
                                      {"InternalIP", "fd00::5"}}},
  };
}

// A case's Node and metadata.
std::pair<Json, cloud::InstanceMetadata> InputsOf(const Case& c) {
  std::pair<Json, cloud::InstanceMetadata> in{KubeletNode(), Metadata()};
  c.node_edit(in.first);
  c.md_edit(in.second);
  return in;
}

TEST(ComputeNodeUpdateTest, Table) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    auto [node, md] = InputsOf(c);
    const Json before = node;
    NodeUpdate u = ComputeNodeUpdate(node, md, c.extra);
    EXPECT_EQ(node, before) << "input must not change";
    ASSERT_EQ(u.node.has_value(), c.want_node_change);
    EXPECT_EQ(u.addresses, c.want_addresses);
    if (!u.node) continue;
    const Json& out = *u.node;
    EXPECT_EQ(kube::ProviderId(out), c.want_provider_id);
    auto labels = kube::Labels(out);
    for (const auto& [k, v] : c.want_labels) EXPECT_EQ(labels[k], v) << k;
    for (const auto& k : c.want_absent_labels) EXPECT_EQ(labels.count(k), 0u) << k;
    EXPECT_FALSE(kube::HasTaint(out, kUninitializedTaintKey));
    EXPECT_TRUE(kube::HasTaint(out, "dedicated", "NoExecute")) << "other taints kept";
    // Untouched: status, other metadata and spec fields, resourceVersion (for the conditional PUT).
    EXPECT_EQ(out["status"], node["status"]);
    EXPECT_EQ(out["metadata"]["annotations"], node["metadata"]["annotations"]);
    EXPECT_EQ(out["metadata"]["resourceVersion"], "7");
    EXPECT_EQ(out["spec"]["podCIDR"], "10.244.1.0/24");

    // Idempotent: applying the result (and the addresses) leaves nothing to do.
    Json applied = out;
    if (u.addresses) kube::SetNodeAddresses(applied, *u.addresses);
    NodeUpdate again = ComputeNodeUpdate(applied, md, c.extra);
    EXPECT_TRUE(again.empty());
  }
}

// The controllers' hot path uses the two halves without copies: same answers, changed in place.
TEST(ComputeNodeUpdateTest, HalvesAgreeWithTheWhole) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    const auto [node, md] = InputsOf(c);
    NodeUpdate whole = ComputeNodeUpdate(node, md, c.extra);
    EXPECT_EQ(AddressUpdate(node, md), whole.addresses);
    Json in_place = node;
    EXPECT_EQ(ApplyNodeUpdate(in_place, md, c.extra), whole.node.has_value());
    EXPECT_EQ(in_place, whole.node ? *whole.node : node);
    EXPECT_FALSE(ApplyNodeUpdate(in_place, md, c.extra)) << "a second application changes nothing";
  }
}

TEST(ComputeNodeUpdateTest, InitialisedNodeWithSameDataIsEmpty) {
  Json node = KubeletNode();
  NodeUpdate first = ComputeNodeUpdate(node, Metadata(), {});
  ASSERT_TRUE(first.node);
  kube::SetNodeAddresses(*first.node, *first.addresses);
  EXPECT_TRUE(ComputeNodeUpdate(*first.node, Metadata(), {}).empty());
  // An address change alone touches only the addresses.
  cloud::InstanceMetadata md = Metadata();
  md.node_addresses[1].address = "10.0.0.9";
  NodeUpdate u = ComputeNodeUpdate(*first.node, md, {});
  EXPECT_FALSE(u.node);
  ASSERT_TRUE(u.addresses);
  EXPECT_EQ((*u.addresses)[1], (kube::NodeAddress{"InternalIP", "10.0.0.9"}));
}

TEST(NodeUpdateHelpersTest, IdentityAndOwnership) {
  Json node = KubeletNode();
  cloud::NodeIdentity id = NodeIdentityOf(node);
  EXPECT_EQ(id.name, "worker-1");
  EXPECT_EQ(id.provider_id, "");
  EXPECT_EQ(id.system_uuid, "56492e42-22ad-3911-6d72-59cc8f26bc90");
  EXPECT_EQ(id.provided_node_ip, "10.0.0.5");
  EXPECT_TRUE(IsOurs(node));
  node["spec"]["providerID"] = "vsphere://abc";
  EXPECT_TRUE(IsOurs(node));
  node["spec"]["providerID"] = "aws:///us-east-1a/i-1";
  EXPECT_FALSE(IsOurs(node));
}

TEST(NodeUpdateHelpersTest, NeedsLifecycleCheck) {
  struct Case {
    const char* name;
    const char* provider_id;
    bool ready;
    bool shutdown_taint;
    bool want;
  };
  for (const Case& c : std::vector<Case>{
           {"not ready, ours", "vsphere://abc", false, false, true},
           {"not ready, ours, tainted", "vsphere://abc", false, true, true},
           {"not ready, no providerID", "", false, false, false},
           {"not ready, foreign", "aws:///i-1", false, false, false},
           {"ready", "vsphere://abc", true, false, false},
           {"ready, tainted", "vsphere://abc", true, true, true},
           {"ready, tainted, no providerID", "", true, true, true},
           {"ready, tainted, foreign", "aws:///i-1", true, true, false},
       }) {
    Json node = KubeletNode();
    node["spec"]["providerID"] = c.provider_id;
    node["status"]["conditions"][0]["status"] = c.ready ? "True" : "False";
    if (c.shutdown_taint) {
      node["spec"]["taints"].push_back(
          {{"key", "node.cloudprovider.kubernetes.io/shutdown"}, {"effect", "NoSchedule"}});
    }
    EXPECT_EQ(NeedsLifecycleCheck(node), c.want) << c.name;
  }
}

// Issue 41: a merge patch, whose lists replace the stored ones whole; no directive element that a
// server could store as an address.
TEST(NodeUpdateHelpersTest, AddressesPatchReplacesTheList) {
  Json patch = AddressesPatch({{"InternalIP", "10.0.0.5"}, {"InternalIP", "fd00::5"}});
  EXPECT_EQ(patch, Json::parse(R"({"status":{"addresses":[
      {"type":"InternalIP","address":"10.0.0.5"},{"type":"InternalIP","address":"fd00::5"}]}})"));
  EXPECT_EQ(kAddressesPatchType, kube::PatchType::kMerge);
}

// Issue 10 item 4: cloud-provider's reconcileNodeLabels, beta label as the source of truth.
TEST(ReconcileNodeLabelsTest, Table) {
  using L = std::map<std::string, std::string>;
  const std::string bz = "failure-domain.beta.kubernetes.io/zone";
  const std::string gz = "topology.kubernetes.io/zone";
  const std::string br = "failure-domain.beta.kubernetes.io/region";
  const std::string gr = "topology.kubernetes.io/region";
  const std::string bi = "beta.kubernetes.io/instance-type";
  const std::string gi = "node.kubernetes.io/instance-type";
  struct Case {
    std::string name;
    L labels;
    L want;  // labels to set
  };
  const Case cases[] = {
      {"NoLabels", {}, {}},
      {"UnrelatedLabelsOnly", {{"kubernetes.io/hostname", "w1"}}, {}},
      {"AllConsistent", {{bz, "a"}, {gz, "a"}, {br, "r"}, {gr, "r"}, {bi, "t"}, {gi, "t"}}, {}},
      {"GaZoneMissingIsCopied", {{bz, "a"}}, {{gz, "a"}}},
      {"GaRegionMissingIsCopied", {{br, "r"}}, {{gr, "r"}}},
      {"GaInstanceTypeMissingIsCopied", {{bi, "t"}}, {{gi, "t"}}},
      {"AllThreeMissing", {{bz, "a"}, {br, "r"}, {bi, "t"}}, {{gz, "a"}, {gr, "r"}, {gi, "t"}}},
      {"GaDiffersBetaWins", {{bz, "a"}, {gz, "stale"}}, {{gz, "a"}}},
      {"EmptyBetaValueIsStillCopied", {{bi, ""}}, {{gi, ""}}},
      {"BetaMissingGaLeftAlone", {{gz, "a"}, {gr, "r"}, {gi, "t"}}, {}},
      {"OnlyTheInconsistentPair",
       {{bz, "a"}, {gz, "a"}, {br, "r"}, {bi, "t"}, {gi, "x"}},
       {{gr, "r"}, {gi, "t"}}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ReconcileNodeLabels(c.labels), c.want) << c.name;
  }
}

}  // namespace
}  // namespace ccm::controllers
