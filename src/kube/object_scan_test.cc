#include "kube/object_scan.h"

#include <gtest/gtest.h>

#include <string>

#include "kube/objects.h"

namespace ccm::kube::object_scan_test {
namespace {

using Json = nlohmann::json;

struct Case {
  std::string name;
  std::string body;
  std::string want;   // the result's dump, when it succeeds
  std::string error;  // a part of the error message, when it fails
};

class ParseWithoutStatusTest : public testing::TestWithParam<Case> {};

TEST_P(ParseWithoutStatusTest, BuildsAllButTheStatus) {
  const Case& c = GetParam();
  absl::StatusOr<Json> got = ParseWithoutStatus(c.body, "patch /api/v1/nodes/n1/status");
  if (c.error.empty()) {
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(got->dump(), c.want);
    // A client with the whole answer leaves out the same (Client::PatchWithoutStatus).
    Json whole = Json::parse(c.body, nullptr, /*allow_exceptions=*/false);
    if (!whole.is_discarded()) {
      EraseStatusAndManagedFields(whole);
      EXPECT_EQ(whole.dump(), c.want);
    }
    return;
  }
  ASSERT_FALSE(got.ok()) << got->dump();
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(got.status().message().find("patch /api/v1/nodes/n1/status: "), std::string::npos);
  EXPECT_NE(got.status().message().find(c.error), std::string::npos) << got.status();
}

// A Node as kube-apiserver writes it: status last.
constexpr char kNode[] =
    R"({"kind":"Node","apiVersion":"v1","metadata":{"name":"n1","resourceVersion":"42",)"
    R"("labels":{"a":"1"},"annotations":{}},"spec":{"providerID":"p","taints":[{"key":"t",)"
    R"("effect":"NoSchedule"}],"podCIDRs":["10.0.0.0/24",null,1.5,-2,7,true]},)"
    R"("status":{"addresses":[{"type":"Hostname","address":"n1"}],"images":[{"names":["x"]}]}})";
constexpr char kWant[] =
    R"({"apiVersion":"v1","kind":"Node","metadata":{"annotations":{},"labels":{"a":"1"},)"
    R"("name":"n1","resourceVersion":"42"},"spec":{"podCIDRs":["10.0.0.0/24",null,1.5,-2,7,)"
    R"(true],"providerID":"p","taints":[{"effect":"NoSchedule","key":"t"}]}})";

INSTANTIATE_TEST_SUITE_P(
    Bodies, ParseWithoutStatusTest,
    testing::Values(
        Case{"NodeStatusLast", kNode, kWant, ""},
        // Once metadata and spec are read, the status is not read at all: its JSON may be cut.
        Case{"StopsAtTheStatus", R"({"metadata":{"name":"n"},"spec":{},"status":{"broken)",
             R"({"metadata":{"name":"n"},"spec":{}})", ""},
        // Another order: the status is skipped, whatever its shape, and the rest is kept.
        Case{"StatusFirst",
             R"({"status":{"a":[1,{"b":[[]]}],"c":{}},"metadata":{"name":"n"},)"
             R"("spec":{"x":1}})",
             R"({"metadata":{"name":"n"},"spec":{"x":1}})", ""},
        Case{"StatusScalarBeforeSpec", R"({"metadata":{"name":"n"},"status":"Success","code":3})",
             R"({"code":3,"metadata":{"name":"n"}})", ""},
        Case{"StatusArray", R"({"status":[1,[2]],"spec":{"k":"v"}})", R"({"spec":{"k":"v"}})", ""},
        // A nested "status" is not the object's.
        Case{"NestedStatusKept", R"({"spec":{"status":{"x":1}},"metadata":{"status":"y"}})",
             R"({"metadata":{"status":"y"},"spec":{"status":{"x":1}}})", ""},
        Case{"NoStatus", R"({"metadata":{"name":"n"}})", R"({"metadata":{"name":"n"}})", ""},
        // The managed fields are not built either; only the metadata's are the server's.
        Case{"ManagedFieldsLeftOut",
             R"({"metadata":{"name":"n","managedFields":[{"manager":"kubelet"}]},)"
             R"("spec":{"managedFields":1},"status":{}})",
             R"({"metadata":{"name":"n"},"spec":{"managedFields":1}})", ""},
        Case{"MalformedBeforeTheStatus", R"({"metadata":{"name":"n",)", "", "malformed JSON"},
        Case{"MalformedStatusBeforeSpec", R"({"metadata":{},"status":{"a":},"spec":{}})", "",
             "malformed JSON"},
        Case{"Empty", "", "", "malformed JSON"},
        Case{"TrailingGarbage", R"({"metadata":{}} x)", "", "malformed JSON"},
        Case{"NotAnObject", R"(["metadata"])", "", "the answer is not an object"},
        Case{"Scalar", "3", "", "the answer is not an object"}),
    [](const testing::TestParamInfo<Case>& i) { return i.param.name; });

// Without stopping early the result is the full parse less the status.
TEST(ParseWithoutStatusFullTest, SameAsTheFullParseLessTheStatus) {
  Json full = Json::parse(kNode);
  full.erase("status");
  absl::StatusOr<Json> got = ParseWithoutStatus(kNode, "n1");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, full);
}

// A watch event of a kubelet's Node, as kube-apiserver frames and orders it.
std::string NodeEvent(const std::string& type, const std::string& status) {
  return R"({"type":")" + type +
         R"(","object":{"kind":"Node","apiVersion":"v1","metadata":{"name":"n1",)"
         R"("resourceVersion":"9","labels":{"a":"1"},"managedFields":[{"manager":"kubelet"}]},)"
         R"("spec":{"taints":[{"key":"t","effect":"NoSchedule"}]},"status":)" +
         status + "}}";
}

constexpr char kKubeletStatus[] =
    R"({"capacity":{"cpu":"4"},"conditions":[{"type":"Ready","status":"True"}],)"
    R"("addresses":[{"type":"InternalIP","address":"10.0.0.1"}],"daemonEndpoints":{},)"
    R"("nodeInfo":{"machineID":"m","systemUUID":"u-1","bootID":"b"},)"
    R"("images":[{"names":["x@sha256:1","x:1"],"sizeBytes":1}],"volumesInUse":[]})";

// The event rule the watch uses: its type, and its object under the cache's rule.
KeepRule EventRule(const KeepRule& object) {
  return KeepRule{
      .members = {{.key = "type"},
                  {.key = "object", .only = object.only, .members = object.members, .last = true}}};
}

// Whatever the order and whatever the parse skips or stops before, the informer caches the same
// object as from the whole event (it trims both).
TEST(ParsePrunedTest, NodeEventsAreWhatTheCacheKeeps) {
  const std::vector<std::string> events = {
      NodeEvent("MODIFIED", kKubeletStatus),
      // The kept fields, then images: the parse stops there.
      NodeEvent("ADDED", R"({"addresses":[],"conditions":[],"nodeInfo":{"systemUUID":"u"},)"
                         R"("images":[]})"),
      // No addresses yet (a kubelet with --cloud-provider=external): nothing stops, all is read.
      NodeEvent("ADDED", R"({"conditions":[],"nodeInfo":{"systemUUID":"u-2"},"images":[1]})"),
      // The object before the type: no stop inside it, the type is kept.
      R"({"object":{"metadata":{"name":"n3"},"status":{"addresses":[],"conditions":[],)"
      R"("nodeInfo":{"systemUUID":"u"},"images":[]}},"type":"DELETED"})",
      // Status before metadata: no stop inside the status, the metadata is kept.
      R"({"type":"ADDED","object":{"status":{"addresses":[],"conditions":[],"nodeInfo":{},)"
      R"("images":[]},"metadata":{"name":"n4","managedFields":[]}}})",
      // An ERROR event's Status keeps its string status and the rest.
      R"({"type":"ERROR","object":{"kind":"Status","metadata":{},"status":"Failure",)"
      R"("reason":"Expired","code":410}})",
  };
  const KeepRule rule = EventRule(NodeCacheRule());
  for (const std::string& e : events) {
    SCOPED_TRACE(e);
    absl::StatusOr<Json> got = ParsePruned(e, rule, "watch event");
    ASSERT_TRUE(got.ok()) << got.status();
    Json want = Json::parse(e);
    TrimNodeForCache(want["object"]);
    TrimNodeForCache((*got)["object"]);
    EXPECT_EQ(*got, want);
  }
}

// A rule on an array applies to each object in it; scalars and arrays in it are kept whole.
TEST(ParsePrunedTest, ArrayRulesApplyToEachObject) {
  const KeepRule rule{
      .members = {{.key = "list", .only = true, .members = {{.key = "k"}}}, {.key = "plain"}}};
  const std::string doc =
      R"({"list":[{"k":1,"x":2},3,[{"x":4}],{"x":5,"k":{"y":6}}],"plain":[{"x":7}],"z":8})";
  const std::string want =
      R"({"list":[{"k":1},3,[{"x":4}],{"k":{"y":6}}],"plain":[{"x":7}],"z":8})";
  absl::StatusOr<Json> fast = ParsePruned(doc, rule, "test");
  ASSERT_TRUE(fast.ok()) << fast.status();
  EXPECT_EQ(fast->dump(), want);
  absl::StatusOr<Json> slow = ParsePrunedWithNlohmann(doc, rule, "test");
  ASSERT_TRUE(slow.ok()) << slow.status();
  EXPECT_EQ(slow->dump(), want);
}

// The stop: what follows the kept fields of a status written last is not read at all.
TEST(ParsePrunedTest, StopsAfterTheLastKeptField) {
  const std::string cut = R"({"type":"MODIFIED","object":{"metadata":{"name":"n1"},"status":{)"
                          R"("addresses":[],"conditions":[],"nodeInfo":{"systemUUID":"u",)"
                          R"("bootID":"b"},"images":[{"broken)";
  absl::StatusOr<Json> got = ParsePruned(cut, EventRule(NodeCacheRule()), "watch event");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->dump(),
            R"({"object":{"metadata":{"name":"n1"},"status":{"addresses":[],"conditions":[],)"
            R"("nodeInfo":{"systemUUID":"u"}}},"type":"MODIFIED"})");
  // Without the stop (addresses missing) the cut is an error, not a partial object.
  const std::string no_addresses = R"({"type":"MODIFIED","object":{"metadata":{},"status":{)"
                                   R"("conditions":[],"nodeInfo":{},"images":[{"broken)";
  absl::StatusOr<Json> bad = ParsePruned(no_addresses, EventRule(NodeCacheRule()), "watch event");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("watch event: malformed JSON"), std::string::npos);
}

}  // namespace
}  // namespace ccm::kube::object_scan_test
