#include "csi/syncer/entities.h"

#include <algorithm>
#include <functional>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ccm::csi::syncer {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::SizeIs;

Json Pv(const std::string& name, const std::string& driver = "csi.vsphere.vmware.com") {
  return {{"metadata", {{"name", name}, {"labels", {{"b", "2"}, {"a", "1"}}}}},
          {"spec",
           {{"csi", {{"driver", driver}, {"volumeHandle", "vol-" + name}}},
            {"claimRef", {{"namespace", "ns1"}, {"name", "data"}}}}}};
}

Json Pvc(const std::string& volume) {
  return {{"metadata", {{"name", "data"}, {"namespace", "ns1"}, {"labels", {{"tier", "gold"}}}}},
          {"spec", {{"volumeName", volume}}}};
}

Json Pod(const std::string& name, const std::string& phase, const std::string& claim = "data") {
  return {{"metadata", {{"name", name}, {"namespace", "ns1"}, {"labels", {{"app", "db"}}}}},
          {"spec",
           {{"volumes",
             {{{"name", "v"}, {"persistentVolumeClaim", {{"claimName", claim}}}},
              {{"name", "scratch"}, {"emptyDir", Json::object()}}}}}},
          {"status", {{"phase", phase}}}};
}

TEST(EntitiesTest, OurPvsOnly) {
  EXPECT_TRUE(IsOurPv(Pv("pv1")));
  EXPECT_FALSE(IsOurPv(Pv("pv1", "other.csi.example.com")));
  EXPECT_FALSE(IsOurPv(Json{{"metadata", {{"name", "nfs"}}}, {"spec", {{"nfs", {}}}}}));
  EXPECT_EQ(VolumeHandle(Pv("pv1")), "vol-pv1");
  EXPECT_EQ(ClaimKey(Pv("pv1")), "ns1/data");
  EXPECT_THAT(PodClaimKeys(Pod("p", "Running")), ElementsAre("ns1/data"));
}

TEST(EntitiesTest, PvAlone) {
  auto e = DesiredEntities(Pv("pv1"), nullptr, {}, "c1");
  ASSERT_THAT(e, SizeIs(1));
  EXPECT_EQ(e[0].entity_type, kEntityPv);
  EXPECT_EQ(e[0].entity_name, "pv1");
  EXPECT_EQ(e[0].namespace_name, "");
  EXPECT_EQ(e[0].cluster_id, "c1");
  EXPECT_EQ(e[0].labels, (cns::KeyValues{{"a", "1"}, {"b", "2"}}));  // sorted
}

TEST(EntitiesTest, BoundPvcAndRunningPods) {
  const Json pvc = Pvc("pv1");
  auto e = DesiredEntities(
      Pv("pv1"), &pvc,
      {Pod("web-1", "Running"), Pod("web-2", "Pending"), Pod("other", "Running", "other-claim")},
      "c1");
  ASSERT_THAT(e, SizeIs(3));
  EXPECT_EQ(e[1].entity_type, kEntityPvc);
  EXPECT_EQ(e[1].namespace_name, "ns1");
  EXPECT_EQ(e[1].labels, (cns::KeyValues{{"tier", "gold"}}));
  EXPECT_THAT(e[1].referred_entity, ElementsAre(cns::EntityReference{kEntityPv, "pv1", "", "c1"}));
  EXPECT_EQ(e[2].entity_type, kEntityPod);
  EXPECT_EQ(e[2].entity_name, "web-1");
  EXPECT_THAT(e[2].labels, IsEmpty());  // as the reference: Pods carry no labels
  EXPECT_THAT(e[2].referred_entity,
              ElementsAre(cns::EntityReference{kEntityPvc, "data", "ns1", "c1"}));
}

TEST(EntitiesTest, PvcBoundElsewhereIsNotOurs) {
  const Json pvc = Pvc("another-pv");
  EXPECT_THAT(DesiredEntities(Pv("pv1"), &pvc, {Pod("web-1", "Running")}, "c1"), SizeIs(1));
}

TEST(EntitiesTest, DeletingPodIsNotRunning) {
  Json pod = Pod("web-1", "Running");
  EXPECT_TRUE(PodIsRunning(pod));
  pod["metadata"]["deletionTimestamp"] = "2025-01-01T00:00:00Z";
  EXPECT_FALSE(PodIsRunning(pod));
}

TEST(UpdateFilterTest, OnlyWhatTheEntitiesAreMadeOfMatters) {
  struct Case {
    const char* what;
    std::function<void(Json&)> change;
    bool pv_matters;
    bool pvc_matters;
  };
  const std::vector<Case> cases = {
      {"nothing", [](Json&) {}, false, false},
      {"status phase", [](Json& o) { o["status"]["phase"] = "Bound"; }, false, false},
      {"finalizers", [](Json& o) { o["metadata"]["finalizers"] = {"kubernetes.io/pv-protection"}; },
       false, false},
      {"annotations",
       [](Json& o) {
         o["metadata"]["annotations"]["pv.kubernetes.io/bound-by-controller"] = "yes";
       },
       false, false},
      {"resourceVersion", [](Json& o) { o["metadata"]["resourceVersion"] = "42"; }, false, false},
      {"a label", [](Json& o) { o["metadata"]["labels"]["c"] = "3"; }, true, true},
      {"labels removed", [](Json& o) { o["metadata"].erase("labels"); }, true, true},
      {"claimRef", [](Json& o) { o["spec"]["claimRef"]["name"] = "other"; }, true, false},
      {"claimRef uid only", [](Json& o) { o["spec"]["claimRef"]["uid"] = "u-1"; }, false, false},
      {"volume handle", [](Json& o) { o["spec"]["csi"]["volumeHandle"] = "vol-x"; }, true, false},
      {"volumeName", [](Json& o) { o["spec"]["volumeName"] = "pv9"; }, false, true},
  };
  for (const Case& c : cases) {
    Json pv = Pv("pv1"), pvc = Pvc("pv1");
    Json pv2 = pv, pvc2 = pvc;
    c.change(pv2);
    c.change(pvc2);
    EXPECT_EQ(PvUpdateMatters(pv, pv2), c.pv_matters) << c.what;
    EXPECT_EQ(PvcUpdateMatters(pvc, pvc2), c.pvc_matters) << c.what;
  }
}

TEST(DigestTest, EqualSetsInAnyOrderShareADigestAndAnyChangeMovesIt) {
  const std::vector<Json> pods = {Pod("p1", "Running"), Pod("p2", "Running")};
  const Json pv = Pv("pv1"), pvc = Pvc("pv1");
  std::vector<cns::EntityMetadata> a = DesiredEntities(pv, &pvc, pods, "c1");
  std::vector<cns::EntityMetadata> b = a;
  std::reverse(b.begin(), b.end());
  for (auto& e : b) std::reverse(e.labels.begin(), e.labels.end());
  EXPECT_EQ(EntitiesDigest(a), EntitiesDigest(b));
  EXPECT_NE(EntitiesDigest(a), EntitiesDigest({}));
  std::vector<cns::EntityMetadata> c = a;
  c.front().labels.emplace_back("new", "label");
  EXPECT_NE(EntitiesDigest(a), EntitiesDigest(c));
  std::vector<cns::EntityMetadata> d = a;
  d.back().entity_name += "x";
  EXPECT_NE(EntitiesDigest(a), EntitiesDigest(d));
  // The pieces are length-prefixed: moving a character between fields changes the digest.
  std::vector<cns::EntityMetadata> e = a, f = a;
  e.front().entity_name = "ab";
  e.front().namespace_name = "c";
  f.front().entity_name = "a";
  f.front().namespace_name = "bc";
  EXPECT_NE(EntitiesDigest(e), EntitiesDigest(f));
}

TEST(PlanTest, NothingWhenEqualInAnyOrder) {
  const Json pvc = Pvc("pv1");
  auto want = DesiredEntities(Pv("pv1"), &pvc, {Pod("web-1", "Running")}, "c1");
  auto have = want;
  std::reverse(have.begin(), have.end());
  std::reverse(have[2].labels.begin(), have[2].labels.end());
  EXPECT_THAT(PlanEntityUpdate(have, want, "c1"), IsEmpty());
}

TEST(PlanTest, WritesMissingAndChangedRemovesStale) {
  const Json pvc = Pvc("pv1");
  auto want = DesiredEntities(Pv("pv1"), &pvc, {}, "c1");
  std::vector<cns::EntityMetadata> have = {want[0]};
  have[0].labels = {{"a", "old"}};
  cns::EntityMetadata gone_pod{kEntityPod, "web-0", "ns1", {}, false, "c1", {}};
  cns::EntityMetadata foreign{kEntityPod, "x", "ns9", {}, false, "other-cluster", {}};
  have.push_back(gone_pod);
  have.push_back(foreign);
  auto plan = PlanEntityUpdate(have, want, "c1");
  ASSERT_THAT(plan, SizeIs(3));
  EXPECT_EQ(plan[0], want[0]);  // labels changed
  EXPECT_EQ(plan[1], want[1]);  // PVC missing
  EXPECT_EQ(plan[2].entity_name, "web-0");
  EXPECT_TRUE(plan[2].remove);
}

TEST(PlanTest, EverythingOfOursRemovedWhenNothingIsDesired) {
  std::vector<cns::EntityMetadata> have = {
      {kEntityPv, "pv1", "", {{"a", "1"}}, false, "c1", {}},
      {kEntityPvc, "data", "ns1", {}, false, "c1", {{kEntityPv, "pv1", "", "c1"}}}};
  auto plan = PlanEntityUpdate(have, {}, "c1");
  ASSERT_THAT(plan, SizeIs(2));
  for (const auto& e : plan) {
    EXPECT_TRUE(e.remove);
    EXPECT_THAT(e.labels, IsEmpty());
  }
  cns::VolumeMetadata m;
  m.entity_metadata = have;
  EXPECT_TRUE(HasEntitiesOf(m, "c1"));
  EXPECT_FALSE(HasEntitiesOf(m, "c2"));
}

// A volume of ours no PV names is labelled pv_missing=true, as the reference's full sync does.
TEST(PvMissingTest, LabelsOurPvEntitiesDropsClaimsAndPodsLeavesOthers) {
  struct Case {
    const char* name;
    std::vector<cns::EntityMetadata> have;
    std::string volume_name;
    std::vector<cns::EntityMetadata> want;
  };
  const cns::EntityMetadata pv{kEntityPv, "pv1", "", {{"app", "db"}}, false, "c1", {}};
  const cns::EntityMetadata pvc{
      kEntityPvc, "data", "ns1", {}, false, "c1", {{kEntityPv, "pv1", "", "c1"}}};
  const cns::EntityMetadata foreign{kEntityPv, "pv9", "", {}, false, "c2", {}};
  cns::EntityMetadata pv_labelled = pv;
  pv_labelled.labels.emplace_back("pv_missing", "true");
  const std::vector<Case> cases = {
      {"PV entity: label added, its own kept", {pv, pvc}, "pvc-1", {pv_labelled}},
      {"labelled already: the same", {pv_labelled}, "pvc-1", {pv_labelled}},
      {"no PV entity: one named after the volume",
       {foreign},
       "pvc-1",
       {{kEntityPv, "pvc-1", "", {{"pv_missing", "true"}}, false, "c1", {}}}},
      {"nothing to name it by", {}, "", {}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(PvMissingEntities(c.have, c.volume_name, "c1"), c.want) << c.name;
  }
  // Applied: the PV entity rewritten with the label, the PVC removed, the foreign one untouched;
  // once labelled, nothing more to write.
  auto plan =
      PlanEntityUpdate({pv, pvc, foreign}, PvMissingEntities({pv, pvc}, "pvc-1", "c1"), "c1");
  ASSERT_THAT(plan, SizeIs(2));
  EXPECT_EQ(plan[0], pv_labelled);
  EXPECT_TRUE(plan[1].remove);
  EXPECT_THAT(PlanEntityUpdate({pv_labelled, foreign},
                               PvMissingEntities({pv_labelled, foreign}, "pvc-1", "c1"), "c1"),
              IsEmpty());
}

TEST(BackingObjectAnnotationTest, AsTheReferenceDecides) {
  struct Case {
    const char* name;
    std::optional<std::string> current;
    std::string uid, object;
    std::optional<std::string> want;
  };
  const std::vector<Case> cases = {
      {"new", std::nullopt, "uid-1", "52ab", "uid-1:52ab"},
      {"same", "uid-1:52ab", "uid-1", "52ab", std::nullopt},
      {"object moved", "uid-1:52ab", "uid-1", "52cd", "uid-1:52cd"},
      {"no object, no annotation", std::nullopt, "uid-1", "", std::nullopt},
      {"no object any more: emptied, not removed", "uid-1:52ab", "uid-1", "", ""},
      {"emptied already", "", "uid-1", "", std::nullopt},
      {"no PV uid", std::nullopt, "", "52ab", std::nullopt},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(BackingObjectAnnotationChange(c.current, c.uid, c.object), c.want) << c.name;
  }
}

// The full sync keeps OwnEntitiesDigest per CNS volume instead of its metadata: it must agree
// with "the plan is empty" in every case.
TEST(PlanTest, OwnEntitiesDigestAgreesWithAnEmptyPlan) {
  const Json pvc = Pvc("pv1");
  const auto want = DesiredEntities(Pv("pv1"), &pvc, {Pod("web-1", "Running")}, "c1");
  const cns::EntityMetadata foreign{kEntityPod, "x", "ns9", {}, false, "other-cluster", {}};
  struct Case {
    std::string what;
    std::function<void(std::vector<cns::EntityMetadata>&)> change;
    bool plan_empty;
  };
  const std::vector<Case> cases = {
      {"same", [](auto&) {}, true},
      {"other order, labels too",
       [](auto& h) {
         std::reverse(h.begin(), h.end());
         for (auto& e : h) std::reverse(e.labels.begin(), e.labels.end());
       },
       true},
      {"another cluster's entity too", [&](auto& h) { h.push_back(foreign); }, true},
      {"a label differs", [](auto& h) { h[0].labels[0].second = "old"; }, false},
      {"the Pod is missing", [](auto& h) { h.pop_back(); }, false},
      {"a stale Pod of ours",
       [](auto& h) {
         h.push_back(h.back());
         h.back().entity_name = "p0";
       },
       false},
      {"ours only under another cluster", [](auto& h) { h[1].cluster_id = "c2"; }, false},
      {"nothing in CNS", [](auto& h) { h.clear(); }, false},
  };
  for (const Case& c : cases) {
    std::vector<cns::EntityMetadata> have = want;
    c.change(have);
    EXPECT_EQ(PlanEntityUpdate(have, want, "c1").empty(), c.plan_empty) << c.what;
    EXPECT_EQ(OwnEntitiesDigest(have, "c1") == EntitiesDigest(want), c.plan_empty) << c.what;
  }
  EXPECT_EQ(OwnEntitiesDigest({foreign}, "c1"), EntitiesDigest({}));
}

}  // namespace
}  // namespace ccm::csi::syncer
