// Conversions of the LeaseLock and EventSink adapters between our records and API objects.
#include "gtest/gtest.h"
#include "kube/kube_event_sink.h"
#include "kube/kube_lease_lock.h"

namespace ccm::kube {
namespace {

TEST(LeaseRecordJsonTest, RoundTripKeepsOtherFieldsAndMicroseconds) {
  Json lease = Json::parse(R"({
    "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
    "metadata": {"name": "cloud-controller-manager", "namespace": "kube-system",
                 "resourceVersion": "42", "labels": {"team": "infra"}},
    "spec": {"holderIdentity": "cp-1_7f3a", "leaseDurationSeconds": 15,
             "acquireTime": "2023-11-14T22:13:20.000001Z",
             "renewTime": "2023-11-14T22:14:00.250000Z", "leaseTransitions": 3,
             "preferredHolder": "cp-2"}
  })");
  absl::StatusOr<LeaderElectionRecord> r = LeaseRecordFromJson(lease);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->holder_identity, "cp-1_7f3a");
  EXPECT_EQ(r->lease_duration_seconds, 15);
  EXPECT_EQ(r->lease_transitions, 3);
  EXPECT_EQ(r->acquire_time, absl::FromUnixMicros(1700000000000001));
  EXPECT_EQ(r->renew_time, absl::FromUnixMicros(1700000040250000));

  LeaderElectionRecord released = *r;
  released.holder_identity = "";
  released.lease_duration_seconds = 1;
  SetLeaseRecord(lease, released);
  EXPECT_EQ(lease["spec"]["holderIdentity"], "");
  EXPECT_EQ(lease["spec"]["leaseDurationSeconds"], 1);
  EXPECT_EQ(lease["spec"]["acquireTime"], "2023-11-14T22:13:20.000001Z");
  EXPECT_EQ(lease["spec"]["renewTime"], "2023-11-14T22:14:00.250000Z");
  EXPECT_EQ(lease["spec"]["preferredHolder"], "cp-2");  // not ours: kept
  EXPECT_EQ(lease["metadata"]["labels"]["team"], "infra");
  EXPECT_EQ(*LeaseRecordFromJson(lease), released);
}

TEST(LeaseRecordJsonTest, EmptyLeaseReadsAsZeroAndBadTimeIsAnError) {
  absl::StatusOr<LeaderElectionRecord> empty = LeaseRecordFromJson(Json::object());
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(*empty, LeaderElectionRecord{});
  Json bad = {{"spec", {{"renewTime", "yesterday"}}}};
  absl::StatusOr<LeaderElectionRecord> r = LeaseRecordFromJson(bad);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("renewTime"), absl::string_view::npos);
}

TEST(EventJsonTest, CoreV1EventRoundTrip) {
  Event e;
  e.ns = "default";
  e.name = "worker-1.179a";
  e.involved_object = {.kind = "Node", .name = "worker-1", .uid = "u1", .api_version = "v1"};
  e.reason = "FailedToFindVM";
  e.message = "no VM";
  e.type = "Warning";
  e.source_component = "cloud-controller-manager";
  e.source_host = "cp-1";
  e.count = 4;
  e.first_timestamp = absl::FromUnixSeconds(1700000000);
  e.last_timestamp = absl::FromUnixSeconds(1700000600);
  e.reporting_controller = "cloud-controller-manager";
  e.reporting_instance = "cp-1";
  const Json j = EventToJson(e);
  EXPECT_EQ(j["kind"], "Event");
  EXPECT_EQ(j["involvedObject"]["kind"], "Node");
  EXPECT_FALSE(j["involvedObject"].contains("namespace"));
  EXPECT_EQ(j["source"]["component"], "cloud-controller-manager");
  EXPECT_EQ(j["firstTimestamp"], "2023-11-14T22:13:20Z");
  EXPECT_EQ(j["lastTimestamp"], "2023-11-14T22:23:20Z");
  EXPECT_EQ(j["reportingComponent"], "cloud-controller-manager");
  absl::StatusOr<Event> back = EventFromJson(j);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->name, e.name);
  EXPECT_EQ(back->involved_object.uid, "u1");
  EXPECT_EQ(back->count, 4);
  EXPECT_EQ(back->first_timestamp, e.first_timestamp);
  EXPECT_EQ(back->last_timestamp, e.last_timestamp);
  EXPECT_EQ(back->reporting_instance, "cp-1");
  EXPECT_EQ(EventPatchJson(e),
            Json::parse(R"({"count":4,"lastTimestamp":"2023-11-14T22:23:20Z","message":"no VM"})"));
}

}  // namespace
}  // namespace ccm::kube
