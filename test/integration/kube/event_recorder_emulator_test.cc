// The event recorder over HTTPS against the Kubernetes API emulator: creates, aggregated patches,
// and re-creation of an aggregated event that disappeared.
#include <filesystem>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "fixtures/kube_emulator/kube_emulator.h"
#include "gtest/gtest.h"
#include "kube/client.h"
#include "kube/event_recorder.h"
#include "kube/kube_event_sink.h"
#include "testing/fake_clock.h"

namespace ccm::kube {
namespace {

class EventRecorderEmulatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(::testing::TempDir(), "/event_recorder_emulator_", getpid());
    std::filesystem::create_directories(dir_);
    ASSERT_TRUE(emulator_.Start().ok());
    const std::string path = dir_ + "/kubeconfig";
    ASSERT_TRUE(emulator_.WriteKubeconfig(path).ok());
    absl::StatusOr<Config> config = LoadKubeconfig(path);
    ASSERT_TRUE(config.ok()) << config.status();
    auto client = RestClient::New(*config);
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = std::move(*client);
    sink_ = std::make_unique<KubeEventSink>(*client_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  testing::KubeEmulator emulator_;
  std::string dir_;
  std::unique_ptr<RestClient> client_;
  std::unique_ptr<KubeEventSink> sink_;
};

TEST_F(EventRecorderEmulatorTest, RepeatsArePatchedAndAVanishedEventIsCreatedAgain) {
  FakeClock clock;
  EventRecorder recorder(*sink_, {.host = "cp-1", .clock = &clock});
  const ObjectReference node{.kind = "Node", .name = "worker-1", .uid = "u-1", .api_version = "v1"};
  for (int i = 0; i < 3; ++i) {
    recorder.Warning(node, "FailedToFindVM", "no VM with uuid 4237");
    recorder.Flush();
    clock.Advance(absl::Minutes(1));
  }
  recorder.Normal(node, "Synced", "addresses updated");
  recorder.Flush();

  std::vector<nlohmann::json> events = emulator_.List("events", "default");
  ASSERT_EQ(events.size(), 2u);
  const nlohmann::json& warning = events[0]["reason"] == "FailedToFindVM" ? events[0] : events[1];
  EXPECT_EQ(warning["count"], 3);
  EXPECT_EQ(warning["type"], "Warning");
  EXPECT_EQ(warning["involvedObject"]["name"], "worker-1");
  EXPECT_EQ(warning["source"]["component"], "cloud-controller-manager");
  EXPECT_EQ(warning["source"]["host"], "cp-1");
  EXPECT_EQ(emulator_.RequestCount("create events"), 2);
  EXPECT_EQ(emulator_.RequestCount("patch events"), 2);

  // The API server's TTL removed the event: the next repeat creates it again, keeping the count.
  ASSERT_TRUE(
      emulator_.Delete("events", "default", warning["metadata"]["name"].get<std::string>()).ok());
  recorder.Warning(node, "FailedToFindVM", "no VM with uuid 4237");
  recorder.Flush();
  events = emulator_.List("events", "default");
  ASSERT_EQ(events.size(), 2u);
  int count = 0;
  for (const auto& e : events) {
    if (e["reason"] == "FailedToFindVM") count = e["count"].get<int>();
  }
  EXPECT_EQ(count, 4);
}

}  // namespace
}  // namespace ccm::kube
