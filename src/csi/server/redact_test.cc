#include "csi/server/redact.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "csi/proto/csi.pb.h"

namespace ccm::csi {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(RedactTest, SecretsAreReplacedAtAnyDepthAndTheRestIsKept) {
  ::csi::v1::CreateVolumeRequest req;
  req.set_name("pvc-1");
  (*req.mutable_secrets())["password"] = "hunter2";
  (*req.mutable_parameters())["datastoreurl"] = "ds:///vmfs/volumes/a/";
  const std::string text = RedactedDebugString(req);
  EXPECT_THAT(text, HasSubstr("pvc-1"));
  EXPECT_THAT(text, HasSubstr("ds:///vmfs/volumes/a/"));
  EXPECT_THAT(text, HasSubstr("password"));  // which secret was passed stays visible
  EXPECT_THAT(text, HasSubstr(kRedacted));
  EXPECT_THAT(text, Not(HasSubstr("hunter2")));
  EXPECT_EQ(req.secrets().at("password"), "hunter2") << "the request itself is not modified";

  ::csi::v1::NodeStageVolumeRequest stage;
  stage.set_volume_id("v1");
  (*stage.mutable_secrets())["token"] = "s3cr3t";
  stage.mutable_volume_capability()->mutable_mount()->set_fs_type("ext4");
  const std::string stage_text = RedactedDebugString(stage);
  EXPECT_THAT(stage_text, Not(HasSubstr("s3cr3t")));
  EXPECT_THAT(stage_text, HasSubstr("ext4"));
}

}  // namespace
}  // namespace ccm::csi
