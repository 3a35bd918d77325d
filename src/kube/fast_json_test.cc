#include "kube/fast_json.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kube/metadata_scan.h"
#include "kube/object_scan.h"
#include "kube/objects.h"

namespace ccm::kube::fast_json_test {
namespace {

using Json = nlohmann::json;

// Documents simdjson takes: each is built exactly as nlohmann builds it, down to the number
// types (a non-negative integer unsigned, a negative one signed) and the last duplicate key.
const std::vector<std::string>& Taken() {
  static const auto* docs = new std::vector<std::string>{
      R"({})",
      R"([])",
      R"("text")",
      R"(0)",
      R"(-7)",
      R"([-0, -0.0, 0.0, 1E2, 1e-2])",
      R"(18446744073709551615)",
      R"(9223372036854775807)",
      R"(-9223372036854775808)",
      R"(1.5e300)",
      R"(2.0)",
      R"(true)",
      R"(null)",
      R"({"a":1,"a":2,"b":[1,-1,1.25,"x",null,false,{"c":{}}]})",
      R"({"esc":"line\nquote\" unicode \u00e9 \ud83d\ude00 nul \u0000 slash \/"})",
      R"(  {"spaces" : [ 1 , 2 ] }  )",
      R"({"kind":"Node","apiVersion":"v1","metadata":{"name":"n1","labels":{"k":"v"}},)"
      R"("status":{"capacity":{"cpu":"4"},"images":[{"names":["a","b"],"sizeBytes":123}]}})",
  };
  return *docs;
}

TEST(FastParseTest, BuildsWhatNlohmannBuilds) {
  for (const std::string& doc : Taken()) {
    SCOPED_TRACE(doc);
    std::optional<Json> fast = FastParse(doc);
    ASSERT_TRUE(fast.has_value());
    const Json want = Json::parse(doc);
    EXPECT_EQ(*fast, want);
    EXPECT_EQ(fast->dump(), want.dump());
    EXPECT_EQ(fast->type(), want.type());
    if (want.is_object() && want.contains("b")) {
      for (size_t i = 0; i < want["b"].size(); ++i) {
        EXPECT_EQ((*fast)["b"][i].type(), want["b"][i].type()) << i;
      }
    }
  }
}

// Left to nlohmann (which gives the error, or a value simdjson cannot represent).
TEST(FastParseTest, LeavesToNlohmannWhatSimdjsonDoesNotTake) {
  for (const std::string doc : {"", "{", R"({"a":})", R"({"a":1} x)", R"({"a":"\x"})", "[1,]",
                                "18446744073709551616", "\xff\xfe"}) {
    SCOPED_TRACE(doc);
    EXPECT_FALSE(FastParse(doc).has_value());
  }
  EXPECT_FALSE(FastParse(std::string(kFastJsonMaxBytes + 1, ' ')).has_value());
}

// A watch event rule and objects in several orders: the fast path keeps what nlohmann's pruning
// parse keeps, stops included.
TEST(FastParsePrunedTest, SameAsTheNlohmannParse) {
  const KeepRule event{.members = {{.key = "type"},
                                   {.key = "object",
                                    .only = NodeCacheRule().only,
                                    .members = NodeCacheRule().members,
                                    .last = true}}};
  const KeepRule without_status{.members = {{.key = "metadata"},
                                            {.key = "spec"},
                                            {.key = "status", .drop = true, .last = true}}};
  const std::vector<std::string> docs = {
      R"({"type":"MODIFIED","object":{"kind":"Node","metadata":{"name":"n","managedFields":[1]},)"
      R"("spec":{"taints":[]},"status":{"capacity":{},"conditions":[{"type":"Ready"}],)"
      R"("addresses":[],"nodeInfo":{"machineID":"m","systemUUID":"u"},"images":[{}],"x":1}}})",
      // The object before the type; the status before the metadata.
      R"({"object":{"status":{"addresses":[],"conditions":[],"nodeInfo":{},"images":[]},)"
      R"("metadata":{"name":"n"}},"type":"ADDED"})",
      // A member after the stop is not kept.
      R"({"type":"ADDED","object":{"metadata":{},"status":{"addresses":[],"conditions":[],)"
      R"("nodeInfo":{"systemUUID":"u"}},"after":1}})",
      R"({"type":"ERROR","object":{"kind":"Status","status":"Failure","code":410}})",
      R"({"metadata":{"name":"n"},"spec":{"a":[1]},"status":{"big":[1,2,3]},"after":2})",
      R"({"status":{"a":1},"metadata":{"name":"n"},"spec":{}})",
      R"({"type":"ADDED","object":[1,2]})",
      R"({})",
  };
  for (const KeepRule* rule : {&event, &without_status}) {
    for (const std::string& doc : docs) {
      SCOPED_TRACE(doc);
      std::optional<Json> fast = FastParsePruned(doc, *rule);
      ASSERT_TRUE(fast.has_value());
      absl::StatusOr<Json> want = ParsePrunedWithNlohmann(doc, *rule, "test");
      ASSERT_TRUE(want.ok()) << want.status();
      EXPECT_EQ(fast->dump(), want->dump());
    }
  }
  EXPECT_FALSE(FastParsePruned("[1]", event).has_value());  // not an object: nlohmann's error
  EXPECT_FALSE(FastParsePruned(R"({"type":"A","object":{)", event).has_value());
}

TEST(FastScanMetadataTest, SameAsTheNlohmannScan) {
  const std::vector<std::string> docs = {
      R"({"kind":"Node","metadata":{"name":"n","namespace":"ns","uid":"u","resourceVersion":"9",)"
      R"("labels":{"name":"not this"},"generation":3,"finalizers":["name"]},"status":{}})",
      R"({"metadata":"not an object","spec":{},"metadata":{"name":"second"}})",
      R"({"spec":{"metadata":{"name":"nested"}},"metadata":{"uid":1,"name":"top"}})",
  };
  for (const std::string& doc : docs) {
    SCOPED_TRACE(doc);
    std::optional<Json> fast = FastScanMetadata(doc);
    ASSERT_TRUE(fast.has_value());
    absl::StatusOr<Json> want = ScanMetadataWithNlohmann(doc, "test");
    ASSERT_TRUE(want.ok()) << want.status();
    EXPECT_EQ(*fast, *want);
  }
  // No metadata object, not an object, malformed: nlohmann's scan says which.
  for (const std::string doc : {R"({"spec":{}})", "[]", R"({"metadata":{"name":)"}) {
    EXPECT_FALSE(FastScanMetadata(doc).has_value()) << doc;
  }
}

}  // namespace
}  // namespace ccm::kube::fast_json_test
