#include "controllers/node_patch.h"

#include <functional>
#include <string>

#include "gtest/gtest.h"

namespace ccm::controllers {
namespace {

using nlohmann::json;

// Lists of one element are spelt json::array({...}): GCC and clang read a braced list of one
// json differently (a one-element array or a copy).

const json kTaintInit = {{"key", "node.cloudprovider.kubernetes.io/uninitialized"},
                         {"value", "true"},
                         {"effect", "NoSchedule"}};
const json kTaintDb = {{"key", "dedicated"}, {"value", "db"}, {"effect", "NoExecute"}};

const json kLabels = {{"kubernetes.io/hostname", "n1"}, {"old", "1"}};

json Node() {
  return {{"metadata", {{"name", "n1"}, {"resourceVersion", "7"}, {"labels", kLabels}}},
          {"spec", {{"taints", {kTaintInit, kTaintDb}}}},
          {"status", {{"phase", "Running"}}}};
}

json TestOp(const std::string& path, const json& v) {
  return {{"op", "test"}, {"path", path}, {"value", v}};
}
json AddOp(const std::string& path, const json& v) {
  return {{"op", "add"}, {"path", path}, {"value", v}};
}
json RemoveOp(const std::string& path) { return {{"op", "remove"}, {"path", path}}; }
const json kGuard = TestOp("/metadata/resourceVersion", "7");

TEST(NodeJsonPatchTest, GuardsExactlyWhatItChanges) {
  struct Case {
    const char* name;
    std::function<void(json&)> change;
    json want;
  };
  const Case cases[] = {
      {"no change", [](json&) {}, json::array()},
      {"new zone label (the provider's truth): no guard, key escaped",
       [](json& n) { n["metadata"]["labels"]["topology.kubernetes.io/zone"] = "a"; },
       json::array({AddOp("/metadata/labels/topology.kubernetes.io~1zone", "a")})},
      {"new label of another owner: the whole map as read tested, tilde escaped",
       [](json& n) { n["metadata"]["labels"]["a~b"] = "x"; },
       {TestOp("/metadata/labels", kLabels), AddOp("/metadata/labels/a~0b", "x")}},
      {"two such labels and a zone label: the map tested once",
       [](json& n) {
         n["metadata"]["labels"]["team"] = "x";
         n["metadata"]["labels"]["env"] = "y";
         n["metadata"]["labels"]["topology.kubernetes.io/zone"] = "a";
       },
       {TestOp("/metadata/labels", kLabels), AddOp("/metadata/labels/env", "y"),
        AddOp("/metadata/labels/team", "x"),
        AddOp("/metadata/labels/topology.kubernetes.io~1zone", "a")}},

      {"changed label: its old value tested",
       [](json& n) { n["metadata"]["labels"]["old"] = "2"; },
       {TestOp("/metadata/labels/old", "1"), AddOp("/metadata/labels/old", "2")}},
      {"removed label: its old value tested",
       [](json& n) { n["metadata"]["labels"].erase("old"); },
       {TestOp("/metadata/labels/old", "1"), RemoveOp("/metadata/labels/old")}},
      {"first annotation: the map is absent, so the resourceVersion guards it",
       [](json& n) {
         n["metadata"]["annotations"] = {{"a", "b"}};
       },
       {kGuard, AddOp("/metadata/annotations", {{"a", "b"}})}},
      {"taint removed: the list tested and written whole",
       [](json& n) { n["spec"]["taints"] = json::array({kTaintDb}); },
       {TestOp("/spec/taints", {kTaintInit, kTaintDb}),
        AddOp("/spec/taints", json::array({kTaintDb}))}},
      {"last taint removed",
       [](json& n) {
         n["spec"]["taints"] = {kTaintInit};
         n["spec"].erase("taints");
       },
       {TestOp("/spec/taints", {kTaintInit, kTaintDb}), RemoveOp("/spec/taints")}},
      {"providerID set where absent: the server refuses later changes, no guard",
       [](json& n) { n["spec"]["providerID"] = "vsphere://x"; },
       json::array({AddOp("/spec/providerID", "vsphere://x")})},
      {"another field: the resourceVersion guards it",
       [](json& n) { n["spec"]["unschedulable"] = true; },
       {kGuard, AddOp("/spec/unschedulable", true)}},
      {"another metadata field, beside a label",
       [](json& n) {
         n["metadata"]["finalizers"] = json::array({"f"});
         n["metadata"]["labels"]["new"] = "x";
       },
       {kGuard, TestOp("/metadata/labels", kLabels), AddOp("/metadata/labels/new", "x"),
        AddOp("/metadata/finalizers", json::array({"f"}))}},
      {"outside metadata and spec",
       [](json& n) { n["status"]["phase"] = "Gone"; },
       {kGuard, {{"op", "replace"}, {"path", "/status/phase"}, {"value", "Gone"}}}},
  };
  for (const Case& c : cases) {
    json before = Node(), after = Node();
    c.change(after);
    json patch = NodeJsonPatch(before, after);
    EXPECT_EQ(patch, c.want) << c.name << ": " << patch.dump();
    json applied = before.patch(patch);
    EXPECT_EQ(applied, after) << c.name;
  }
}

TEST(NodeJsonPatchTest, TaintsAddedWhereThereWereNoneAreGuardedByTheVersion) {
  json before = Node();
  before["spec"].erase("taints");
  json after = before;
  after["spec"]["taints"] = json::array({kTaintDb});
  EXPECT_EQ(NodeJsonPatch(before, after),
            json({kGuard, AddOp("/spec/taints", json::array({kTaintDb}))}));
}

// Never from the API server, but handled: without a spec object the whole difference is
// written behind the resourceVersion.
TEST(NodeJsonPatchTest, NodeWithoutSpecGetsTheWholeDifferenceGuarded) {
  json before = Node();
  before.erase("spec");
  json after = before;
  after["spec"] = {{"providerID", "vsphere://x"}};
  const json patch = NodeJsonPatch(before, after);
  EXPECT_EQ(patch, json({kGuard, AddOp("/spec", {{"providerID", "vsphere://x"}})}));
  EXPECT_EQ(before.patch(patch), after);
  EXPECT_EQ(NodeJsonPatch(before, before), json::array());
}

// What the guards buy: a concurrent writer of other labels neither fails the patch nor loses its
// label; a concurrent change to what we computed from fails it, and PatchTestsHold says so.
TEST(NodeJsonPatchTest, ConcurrentWritersOfOtherValuesKeepTheirWrites) {
  json before = Node(), after = Node();
  after["metadata"]["labels"]["topology.kubernetes.io/zone"] = "a";
  after["spec"]["taints"] = json::array({kTaintDb});
  const json patch = NodeJsonPatch(before, after);

  json other_label = Node();
  other_label["metadata"]["labels"]["team"] = "x";
  other_label["metadata"]["resourceVersion"] = "8";
  json applied = other_label.patch(patch);
  EXPECT_EQ(applied["metadata"]["labels"]["team"], "x");
  EXPECT_EQ(applied["metadata"]["labels"]["topology.kubernetes.io/zone"], "a");
  EXPECT_EQ(applied["spec"]["taints"], json::array({kTaintDb}));
  EXPECT_TRUE(PatchTestsHold(patch, other_label));

  json other_taint = Node();
  other_taint["spec"]["taints"].push_back({{"key", "k"}, {"effect", "NoSchedule"}});
  EXPECT_THROW(other_taint.patch(patch), json::exception);
  EXPECT_FALSE(PatchTestsHold(patch, other_taint));

  json gone = Node();
  gone["spec"].erase("taints");
  EXPECT_FALSE(PatchTestsHold(patch, gone));
}

// An extra label never overwrites: another writer's label (any key) written after the Node was
// read fails the patch that adds one, and PatchTestsHold says so (the caller reads it again).
TEST(NodeJsonPatchTest, AnAddedExtraLabelFailsWhenTheLabelsChanged) {
  json before = Node(), after = Node();
  after["metadata"]["labels"]["team"] = "red";
  const json patch = NodeJsonPatch(before, after);
  EXPECT_EQ(before.patch(patch), after);

  json same_key = Node();
  same_key["metadata"]["labels"]["team"] = "blue";
  EXPECT_THROW(same_key.patch(patch), json::exception);
  EXPECT_FALSE(PatchTestsHold(patch, same_key));

  json status_written = Node();  // a concurrent status write moves only the version
  status_written["metadata"]["resourceVersion"] = "8";
  status_written["status"]["addresses"] = json::array({{{"type", "InternalIP"}, {"address", "a"}}});
  EXPECT_EQ(status_written.patch(patch)["metadata"]["labels"]["team"], "red");
}

}  // namespace
}  // namespace ccm::controllers
