#include "kube/metadata_scan.h"

#include <gtest/gtest.h>

#include <string>

namespace ccm::kube {
namespace {

using Json = nlohmann::json;

struct ScanCase {
  std::string name;
  std::string body;
  std::string want;   // the result's dump, when it succeeds
  std::string error;  // a part of the error message, when it fails
};

class ScanMetadataTest : public testing::TestWithParam<ScanCase> {};

TEST_P(ScanMetadataTest, KeepsTheIdentityOrNamesWhatIsWrong) {
  const ScanCase& c = GetParam();
  absl::StatusOr<Json> got = ScanMetadata(c.body, "patch /api/v1/nodes/n1");
  if (c.error.empty()) {
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(got->dump(), c.want);
  } else {
    ASSERT_FALSE(got.ok()) << got->dump();
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(got.status().message().find("patch /api/v1/nodes/n1: "), std::string::npos);
    EXPECT_NE(got.status().message().find(c.error), std::string::npos) << got.status();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Bodies, ScanMetadataTest,
    testing::Values(
        ScanCase{"Node",
                 R"({"kind":"Node","apiVersion":"v1","metadata":{"name":"n1","uid":"u-1",)"
                 R"("resourceVersion":"42","labels":{"name":"other","uid":"x"},)"
                 R"("managedFields":[{"manager":"kubelet"}]},"spec":{"providerID":"p"}})",
                 R"({"metadata":{"name":"n1","resourceVersion":"42","uid":"u-1"}})", ""},
        ScanCase{"NamespacedEvent",
                 R"({"metadata":{"namespace":"default","name":"e.1","resourceVersion":"7"}})",
                 R"({"metadata":{"name":"e.1","namespace":"default","resourceVersion":"7"}})", ""},
        // Nested "metadata" keys (a template's) are not the object's.
        ScanCase{"TemplateMetadataFirst",
                 R"({"spec":{"template":{"metadata":{"name":"t"}}},"metadata":{"name":"d"}})",
                 R"({"metadata":{"name":"d"}})", ""},
        ScanCase{"NonStringFieldsSkipped", R"({"metadata":{"name":"n","generation":3,"uid":null}})",
                 R"({"metadata":{"name":"n"}})", ""},
        // Whatever follows the metadata is not read: a broken status is not this scan's concern.
        ScanCase{"StopsAfterMetadata", R"({"metadata":{"name":"n"},"status":{"broken)",
                 R"({"metadata":{"name":"n"}})", ""},
        ScanCase{"MalformedBeforeTheEnd", R"({"metadata":{"name":"n",)", "", "malformed JSON"},
        ScanCase{"Empty", "", "", "malformed JSON"},
        ScanCase{"NoMetadata", R"({"kind":"Status","status":"Success"})", "",
                 "the object has no metadata"},
        ScanCase{"MetadataNotAnObject", R"({"metadata":"n1"})", "", "the object has no metadata"},
        ScanCase{"NotAnObject", R"(["metadata"])", "", "the answer is not an object"}),
    [](const testing::TestParamInfo<ScanCase>& i) { return i.param.name; });

TEST(IdentityOfTest, TakesTheSameFieldsFromAParsedObject) {
  Json node = Json::parse(
      R"({"metadata":{"name":"n1","uid":"u","resourceVersion":"9","labels":{"a":"b"}},"spec":{}})");
  EXPECT_EQ(IdentityOf(node).dump(),
            R"({"metadata":{"name":"n1","resourceVersion":"9","uid":"u"}})");
  EXPECT_EQ(IdentityOf(Json::array()).dump(), R"({"metadata":{}})");
}

}  // namespace
}  // namespace ccm::kube
