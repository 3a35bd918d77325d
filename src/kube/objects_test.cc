#include "kube/objects.h"

#include "gtest/gtest.h"

namespace ccm::kube {
namespace {

Json NodeJson() {
  return Json::parse(R"({
    "apiVersion": "v1", "kind": "Node",
    "metadata": {"name": "n1", "uid": "u-1", "resourceVersion": "42",
                 "labels": {"a": "1"}, "annotations": {"x": "y"}, "futureField": 7},
    "spec": {"providerID": "vsphere://abc", "taints": [
      {"key": "node.cloudprovider.kubernetes.io/uninitialized", "value": "true", "effect": "NoSchedule"},
      {"key": "k2", "effect": "NoExecute"}]},
    "status": {"addresses": [{"type": "InternalIP", "address": "10.0.0.1"}],
               "conditions": [{"type": "Ready", "status": "True"}],
               "nodeInfo": {"systemUUID": "4237-abc"}}})");
}

TEST(Objects, NodeReaders) {
  Json n = NodeJson();
  EXPECT_EQ(Name(n), "n1");
  EXPECT_EQ(Uid(n), "u-1");
  EXPECT_EQ(ResourceVersion(n), "42");
  EXPECT_EQ(ObjectKey(n), "n1");
  EXPECT_EQ(Labels(n), (std::map<std::string, std::string>{{"a", "1"}}));
  EXPECT_EQ(Annotation(n, "x"), "y");
  EXPECT_FALSE(Label(n, "nope").has_value());
  EXPECT_EQ(ProviderId(n), "vsphere://abc");
  EXPECT_EQ(NodeAddresses(n), (std::vector<NodeAddress>{{"InternalIP", "10.0.0.1"}}));
  EXPECT_TRUE(IsNodeReady(n));
  EXPECT_EQ(SystemUuid(n), "4237-abc");
  EXPECT_EQ(Taints(n).size(), 2u);
}

TEST(Objects, TrimNodeForCacheTable) {
  struct Case {
    const char* name;
    const char* in;
    const char* want;
  };
  const Case cases[] = {
      {"kubelet node",
       R"({"metadata":{"name":"n1","resourceVersion":"7","labels":{"a":"b"},
           "managedFields":[{"manager":"kubelet"}]},
           "spec":{"providerID":"vsphere://x","taints":[{"key":"k","effect":"NoSchedule"}]},
           "status":{"addresses":[{"type":"InternalIP","address":"10.0.0.1"}],
                     "conditions":[{"type":"MemoryPressure","status":"False","reason":"r",
                                    "message":"m","lastHeartbeatTime":"2026-11-27T00:00:00Z"},
                                   {"type":"Ready","status":"True","reason":"KubeletReady"}],
                     "nodeInfo":{"systemUUID":"u-1","kernelVersion":"6.1"},
                     "images":[{"names":["busybox"],"sizeBytes":1}],
                     "capacity":{"cpu":"2"},"volumesInUse":["v"],"daemonEndpoints":{}}})",
       R"({"metadata":{"name":"n1","resourceVersion":"7","labels":{"a":"b"}},
           "spec":{"providerID":"vsphere://x","taints":[{"key":"k","effect":"NoSchedule"}]},
           "status":{"addresses":[{"type":"InternalIP","address":"10.0.0.1"}],
                     "conditions":[{"type":"MemoryPressure","status":"False"},
                                   {"type":"Ready","status":"True"}],
                     "nodeInfo":{"systemUUID":"u-1"}}})"},
      {"conditions not objects", R"({"status":{"conditions":[1,[{"a":1}],{"type":"Ready"}]}})",
       R"({"status":{"conditions":[1,[{"a":1}],{"type":"Ready"}]}})"},
      {"no status", R"({"metadata":{"name":"n2"}})", R"({"metadata":{"name":"n2"}})"},
      {"nodeInfo without uuid", R"({"metadata":{"name":"n3"},"status":{"nodeInfo":{"a":1}}})",
       R"({"metadata":{"name":"n3"},"status":{}})"},
      {"not an object", R"([1,2])", R"([1,2])"},
  };
  for (const Case& c : cases) {
    Json node = Json::parse(c.in);
    TrimNodeForCache(node);
    EXPECT_EQ(node, Json::parse(c.want)) << c.name;
    // Readers see the same values after trimming.
    Json full = Json::parse(c.in);
    if (full.is_object()) {
      EXPECT_EQ(SystemUuid(node), SystemUuid(full)) << c.name;
      EXPECT_EQ(NodeAddresses(node).size(), NodeAddresses(full).size()) << c.name;
      EXPECT_EQ(IsNodeReady(node), IsNodeReady(full)) << c.name;
    }
  }
}

TEST(Objects, HasTaintTable) {
  Json n = NodeJson();
  struct Case {
    std::string key, effect;
    bool want;
  };
  const Case cases[] = {
      {"node.cloudprovider.kubernetes.io/uninitialized", "", true},
      {"node.cloudprovider.kubernetes.io/uninitialized", "NoSchedule", true},
      {"node.cloudprovider.kubernetes.io/uninitialized", "NoExecute", false},
      {"k2", "NoExecute", true},
      {"absent", "", false},
  };
  for (const auto& c : cases) EXPECT_EQ(HasTaint(n, c.key, c.effect), c.want) << c.key << c.effect;
  EXPECT_FALSE(HasTaint(Json::object(), "k"));
}

TEST(Objects, MutatorsKeepUnknownFields) {
  Json n = NodeJson();
  EXPECT_TRUE(RemoveTaint(n, "node.cloudprovider.kubernetes.io/uninitialized"));
  EXPECT_FALSE(RemoveTaint(n, "node.cloudprovider.kubernetes.io/uninitialized"));
  EXPECT_TRUE(AddTaint(n, {"s", "", "NoSchedule"}));
  EXPECT_FALSE(AddTaint(n, {"s", "", "NoSchedule"}));
  EXPECT_EQ(Taints(n), (std::vector<Taint>{{"k2", "", "NoExecute"}, {"s", "", "NoSchedule"}}));
  SetLabel(n, "b", "2");
  SetProviderId(n, "vsphere://def");
  SetNodeAddresses(n, {{"Hostname", "h"}, {"InternalIP", "10.0.0.2"}});
  EXPECT_EQ(Label(n, "b"), "2");
  EXPECT_EQ(ProviderId(n), "vsphere://def");
  EXPECT_EQ(NodeAddresses(n).size(), 2u);
  EXPECT_EQ(n["metadata"]["futureField"], 7);

  Json empty = Json::object();
  SetLabel(empty, "k", "v");
  AddTaint(empty, {"t", "v", "NoSchedule"});
  EXPECT_EQ(empty["spec"]["taints"][0]["value"], "v");
  EXPECT_FALSE(IsNodeReady(empty));
}

TEST(Objects, SecretDataTable) {
  Json s = {
      {"metadata", {{"name", "creds"}, {"namespace", "kube-system"}}},
      {"data", {{"vc.username", Base64Encode("admin")}, {"vc.password", Base64Encode("p@ss\n")}}},
      {"stringData", {{"extra", "plain"}}}};
  auto d = SecretData(s);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ((*d)["vc.username"], "admin");
  EXPECT_EQ((*d)["vc.password"], "p@ss\n");
  EXPECT_EQ((*d)["extra"], "plain");
  EXPECT_EQ(ObjectKey(s), "kube-system/creds");
  s["data"]["bad"] = "!!!";
  auto bad = SecretData(s);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("data[bad]"), absl::string_view::npos);
}

TEST(Objects, Base64Table) {
  struct Case {
    std::string plain, enc;
  };
  const Case cases[] = {
      {"", ""}, {"f", "Zg=="}, {"fo", "Zm8="}, {"foo", "Zm9v"}, {std::string("\0\xff", 2), "AP8="}};
  for (const auto& c : cases) {
    EXPECT_EQ(Base64Encode(c.plain), c.enc);
    EXPECT_EQ(Base64Decode(c.enc), c.plain);
  }
  EXPECT_FALSE(Base64Decode("Zg").has_value());
  EXPECT_FALSE(Base64Decode("Z$==").has_value());
}

TEST(Objects, LeaseAndEvent) {
  Json lease = {{"spec",
                 {{"holderIdentity", "a"},
                  {"leaseDurationSeconds", 15},
                  {"renewTime", "2024-01-01T00:00:00.000000Z"},
                  {"leaseTransitions", 3}}}};
  LeaseSpec s = GetLeaseSpec(lease);
  EXPECT_EQ(s.holder_identity, "a");
  EXPECT_EQ(s.lease_duration_seconds, 15);
  EXPECT_EQ(s.lease_transitions, 3);
  s.holder_identity = "b";
  SetLeaseSpec(lease, s);
  EXPECT_EQ(GetLeaseSpec(lease).holder_identity, "b");
  EXPECT_EQ(lease["spec"]["renewTime"], "2024-01-01T00:00:00.000000Z");

  Json ev = {{"type", "Warning"},
             {"reason", "R"},
             {"message", "m"},
             {"count", 2},
             {"involvedObject", {{"kind", "Node"}, {"name", "n1"}}}};
  EventInfo e = GetEventInfo(ev);
  EXPECT_EQ(e.type, "Warning");
  EXPECT_EQ(e.count, 2);
  EXPECT_EQ(e.involved_name, "n1");
}

}  // namespace
}  // namespace ccm::kube
