// The TriggerCsiFullSync controller (feature state trigger-csi-fullsync) against the API
// emulator: the instance is created at start, a triggerSyncID one above the last runs a full
// sync and records it in the status and an Event; wrong IDs are refused with the reference's
// message; a failed sync leaves its error in the status.
#include "csi/syncer/trigger_full_sync.h"

#include <atomic>
#include <filesystem>

#include "absl/strings/match.h"
#include "fixtures/kube_emulator/kube_emulator.h"
#include "gtest/gtest.h"
#include "kube/config.h"
#include "kube/event_recorder.h"
#include "kube/kube_event_sink.h"
#include "testing/eventually.h"

namespace ccm::csi::syncer {
namespace {

using ::ccm::testing::Eventually;
using nlohmann::json;

class TriggerFullSyncTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/trigger-full-sync-XXXXXX";
    dir_ = mkdtemp(tmpl);
    ASSERT_TRUE(emu_.Start().ok());
    ASSERT_TRUE(emu_.WriteKubeconfig(dir_ + "/kubeconfig").ok());
    auto cfg = kube::LoadKubeconfig(dir_ + "/kubeconfig");
    ASSERT_TRUE(cfg.ok());
    auto rc = kube::RestClient::New(*cfg);
    ASSERT_TRUE(rc.ok());
    client_ = *std::move(rc);
    sink_ = std::make_unique<kube::KubeEventSink>(*client_);
    events_ = std::make_unique<kube::EventRecorder>(*sink_);
  }
  void TearDown() override {
    controller_.reset();
    events_.reset();
    emu_.Stop();
    std::filesystem::remove_all(dir_);
  }
  json Instance() { return emu_.Get("triggercsifullsyncs", "", "csifullsync").value_or(json()); }
  void Trigger(uint64_t id) {
    json obj = Instance();
    obj["spec"]["triggerSyncID"] = id;
    ASSERT_TRUE(emu_.Put("triggercsifullsyncs", obj).ok());
  }
  bool HasEvent(const std::string& reason, const std::string& part) {
    for (const json& e : emu_.List("events", "default")) {
      if (e.value("reason", "") == reason && absl::StrContains(e.value("message", ""), part)) {
        return true;
      }
    }
    return false;
  }

  std::string dir_;
  ccm::testing::KubeEmulator emu_;
  std::unique_ptr<kube::RestClient> client_;
  std::unique_ptr<kube::KubeEventSink> sink_;
  std::unique_ptr<kube::EventRecorder> events_;
  std::unique_ptr<TriggerFullSyncController> controller_;
  std::atomic<int> syncs_{0};
  std::atomic<bool> fail_{false};
};

TEST_F(TriggerFullSyncTest, OnDemandSyncsAndTheirStatus) {
  controller_ = std::make_unique<TriggerFullSyncController>(
      *client_,
      [this]() -> absl::Status {
        ++syncs_;
        return fail_ ? absl::UnavailableError("vCenter 10.0.0.1 is down") : absl::OkStatus();
      },
      events_.get());
  ASSERT_TRUE(controller_->Start().ok());
  json first = Instance();
  EXPECT_EQ(first["spec"]["triggerSyncID"], 0);
  EXPECT_EQ(first["status"]["lastTriggerSyncID"], 0);
  EXPECT_EQ(first["status"]["inProgress"], false);

  Trigger(1);
  ASSERT_TRUE(Eventually([&] {
    json s = Instance()["status"];
    return s.value("lastTriggerSyncID", 0) == 1 && !s.value("inProgress", true) &&
           s.contains("lastSuccessfulEndTimeStamp");
  })) << Instance().dump();
  EXPECT_EQ(syncs_, 1);
  ASSERT_TRUE(
      Eventually([&] { return HasEvent("TriggerCsiFullSyncSucceeded", "triggerSyncID: 1"); }));

  Trigger(3);  // skips 2: refused, no sync
  ASSERT_TRUE(Eventually([&] { return HasEvent("TriggerCsiFullSyncFailed", "TriggerSyncID: 3"); }));
  EXPECT_EQ(syncs_, 1);
  EXPECT_EQ(Instance()["status"]["lastTriggerSyncID"], 1);

  fail_ = true;
  Trigger(2);
  ASSERT_TRUE(Eventually([&] {
    return Instance()["status"].value("lastTriggerSyncID", 0) == 2 &&
           absl::StrContains(Instance()["status"].value("error", ""), "vCenter 10.0.0.1 is down");
  })) << Instance().dump();
  EXPECT_EQ(syncs_, 2);
  EXPECT_FALSE(Instance()["status"]["inProgress"].get<bool>());
}

TEST_F(TriggerFullSyncTest, AnInstanceLeftInProgressIsResetAtStart) {
  ASSERT_TRUE(emu_.Create("triggercsifullsyncs",
                          {{"apiVersion", "cns.vmware.com/v1alpha1"},
                           {"kind", "TriggerCsiFullSync"},
                           {"metadata", {{"name", "csifullsync"}}},
                           {"spec", {{"triggerSyncID", 4}}},
                           {"status", {{"inProgress", true}, {"lastTriggerSyncID", 4}}}})
                  .ok());
  controller_ = std::make_unique<TriggerFullSyncController>(
      *client_, [] { return absl::OkStatus(); }, nullptr);
  ASSERT_TRUE(controller_->Start().ok());
  EXPECT_EQ(Instance()["status"]["inProgress"], false);
  EXPECT_EQ(Instance()["status"]["lastTriggerSyncID"], 4);
}

}  // namespace
}  // namespace ccm::csi::syncer
