// The custom resources' JSON: the reference's field names, and objects with members of the wrong
// type (a hand-edited object, another writer) read as empty instead of failing.
#include <gtest/gtest.h>

#include "csi/crd/cnsvolumeinfo.h"
#include "csi/crd/csinodetopology.h"

namespace ccm::csi {
namespace {

TEST(CsiNodeTopologyJsonTest, RoundTripWithTheReferencesNames) {
  kube::Json obj = NewCsiNodeTopology("n1", "uid-1", "4237-u");
  EXPECT_EQ(obj["spec"]["nodeID"], "n1");
  EXPECT_EQ(obj["spec"]["nodeuuid"], "4237-u");
  EXPECT_EQ(obj["metadata"]["ownerReferences"][0]["uid"], "uid-1");
  NodeTopologyStatus st{kNodeTopologySuccess, "", {{"topology.csi.vmware.com/k8s-zone", "a"}}};
  obj = WithStatus(obj, st);
  EXPECT_EQ(obj["status"]["topologyLabels"][0]["key"], "topology.csi.vmware.com/k8s-zone");
  const CsiNodeTopology back = ParseCsiNodeTopology(obj);
  EXPECT_EQ(back.name, "n1");
  EXPECT_EQ(back.node_uuid, "4237-u");
  EXPECT_EQ(back.status, st);
  EXPECT_TRUE(NewCsiNodeTopology("n1", "", "u").at("metadata").count("ownerReferences") == 0);
}

TEST(CsiNodeTopologyJsonTest, WrongTypesReadAsEmpty) {
  for (const char* text : {R"([])", R"({"spec": 7, "status": "x"})",
                           R"({"metadata": {"name": 3}, "spec": {"nodeuuid": [1]},
                               "status": {"status": 1, "topologyLabels": {"key": "k"}}})",
                           R"({"status": {"topologyLabels": [7, {"value": "v"}, {"key": 1}]}})"}) {
    const CsiNodeTopology t = ParseCsiNodeTopology(kube::Json::parse(text));
    EXPECT_EQ(t.name, "") << text;
    EXPECT_EQ(t.node_uuid, "") << text;
    EXPECT_EQ(t.status, NodeTopologyStatus{}) << text;
  }
}

TEST(CnsVolumeInfoJsonTest, TheReferencesNamesAndWrongTypes) {
  kube::Json obj = NewCnsVolumeInfo("vmware-system-csi", "file:abc", "vc2.example.com");
  EXPECT_EQ(obj["kind"], "CNSVolumeInfo");
  EXPECT_EQ(obj["metadata"]["name"], "file-abc");  // as the reference names file volumes' records
  const CnsVolumeInfo back = ParseCnsVolumeInfo(obj);
  EXPECT_EQ(back.volume_id, "file:abc");
  EXPECT_EQ(back.vcenter_server, "vc2.example.com");
  EXPECT_EQ(CnsVolumeInfoName("a296fbf5-1acd-4e7a-b660-2514edd77027"),
            "a296fbf5-1acd-4e7a-b660-2514edd77027");
  const CnsVolumeInfo bad =
      ParseCnsVolumeInfo(kube::Json::parse(R"({"spec": {"vCenterServer": 5}})"));
  EXPECT_EQ(bad.vcenter_server, "");
  EXPECT_EQ(ParseCnsVolumeInfo(kube::Json::parse("null")).volume_id, "");
}

}  // namespace
}  // namespace ccm::csi
