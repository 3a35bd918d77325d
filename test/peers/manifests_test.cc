// The manifests and custom resources against the real kube-apiserver (issue 53 items 4 and 5):
//  - every kustomization under deploy/ (the CPI's overlays single, ha and multi-vcenter; the CSI
//    driver's default and zones) is applied for real and accepted, unknown fields refused;
//  - every custom resource our binaries write (CnsVolumeOperationRequest, CSINodeTopology,
//    CnsVolumeInfo, TriggerCsiFullSync, CnsVSphereVolumeMigration), written by the binaries' own
//    code through a client that records each write, reads back with everything it sent: the
//    CRDs' schemas prune nothing and refuse nothing;
//  - the validating webhook: deploy/csi/deploy-webhook.sh makes its certificate and Secret and
//    applies its manifest to the server; our binary serves with that Secret's certificate, and
//    the real server calls it through the manifest's ValidatingWebhookConfiguration (its
//    Service resolved through Endpoints: --enable-aggregator-routing) over TLS, and admits and
//    denies what the reference does.
#include <sched.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "csi/controller/operation_store.h"
#include "csi/controller/volume_infos.h"
#include "csi/crd/csinodetopology.h"
#include "csi/migration/volume_migrations.h"
#include "csi/syncer/trigger_full_sync.h"
#include "gtest/gtest.h"
#include "integration/child_process.h"
#include "integration/harness.h"
#include "peers/csi_stack.h"
#include "peers/kube_cluster.h"
#include "peers/peers.h"
#include "peers/recording_client.h"
#include "testing/eventually.h"
#include "testing/free_port.h"

namespace ccm::peers {
namespace {
using integration::ChildProcess;
using json = nlohmann::json;
using ::ccm::testing::Eventually;

// The address the webhook's Endpoints name. An Endpoints address may not be a loopback one, so
// this process (and every program it starts) runs in a network namespace of its own, whose lo
// also carries this address: nothing leaves the machine, nothing of the host's changes.
constexpr char kWebhookIp[] = "10.254.254.1";

// unshare(CLONE_NEWNET) must come before any thread exists: a static initializer.
absl::Status EnterOwnNetwork() {
  if (unshare(CLONE_NEWNET) != 0) {
    return absl::PermissionDeniedError(
        absl::StrCat("unshare(CLONE_NEWNET): ", std::strerror(errno), " (needs root)"));
  }
  for (const std::vector<std::string>& argv :
       {std::vector<std::string>{"/bin/ip", "link", "set", "lo", "up"},
        std::vector<std::string>{"/bin/ip", "addr", "add", absl::StrCat(kWebhookIp, "/32"), "dev",
                                 "lo"}}) {
    std::string cmd = absl::StrJoin(argv, " ");
    if (std::system(cmd.c_str()) != 0) return absl::InternalError(cmd + " failed");
  }
  return absl::OkStatus();
}
const absl::Status kOwnNetwork = EnterOwnNetwork();

class ManifestsPeersTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ASSERT_TRUE(kOwnNetwork.ok()) << kOwnNetwork;
    // The webhook's Service is reached through its Endpoints (no kube-proxy here).
    auto cluster = KubeCluster::Start("manifests", {{"--enable-aggregator-routing=true"}});
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = cluster->release();
  }
  static void TearDownTestSuite() { delete cluster_; }
  static KubeCluster& cluster() { return *cluster_; }
  static kube::RestClient& client() { return cluster_->client(); }
  static std::string Deploy(const std::string& dir) { return SourceDir() + "/deploy/" + dir; }

  static inline KubeCluster* cluster_ = nullptr;
};

TEST_F(ManifestsPeersTest, EveryKustomizationIsAppliedAndAccepted) {
  for (const char* dir :
       {"kustomize/overlays/single", "kustomize/overlays/ha", "kustomize/overlays/multi-vcenter",
        "csi/kustomize/overlays/default", "csi/kustomize/overlays/zones"}) {
    SCOPED_TRACE(dir);
    // Strict: a field the server's schema does not know is an error, not dropped.
    auto out = cluster().Kubectl({"apply", "--validate=strict", "-k", Deploy(dir)});
    EXPECT_TRUE(out.ok()) << out.status();
  }
  // The check itself: a misspelt field is refused by the server's schema, not dropped.
  const std::string bad = cluster().dir() + "/misspelt.yaml";
  integration::WriteFile(bad,
                         "apiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata:\n"
                         "  name: misspelt.example.com\nspec:\n  attachRequierd: true\n");
  auto refused = cluster().Kubectl({"apply", "--validate=strict", "-f", bad});
  EXPECT_FALSE(refused.ok());
  EXPECT_TRUE(absl::StrContains(refused.status().message(), "attachRequierd")) << refused.status();
  // What a user then sees: the objects are there as written.
  auto ds = cluster().Kubectl(
      {"-n", "kube-system", "get", "daemonset", "vsphere-cloud-controller-manager", "-o", "name"});
  EXPECT_TRUE(ds.ok()) << ds.status();
  auto csi = client().Get(CsiDrivers(), "", kDriver);
  ASSERT_TRUE(csi.ok()) << csi.status();
  EXPECT_EQ((*csi)["spec"].value("attachRequired", false), true);
  EXPECT_EQ((*csi)["spec"].value("podInfoOnMount", true), false);
  for (const char* crd : {"cnsvolumeoperationrequests", "cnsvspherevolumemigrations",
                          "triggercsifullsyncs", "csinodetopologies", "cnsvolumeinfoes"}) {
    EXPECT_TRUE(
        client().Get(CustomResourceDefinitions(), "", absl::StrCat(crd, ".cns.vmware.com")).ok())
        << crd;
  }
}

// Each write through the binaries' code, then every sent member is in what the server keeps.
TEST_F(ManifestsPeersTest, CustomResourcesReadBackAsWritten) {
  ASSERT_TRUE(cluster().Kubectl({"apply", "-k", Deploy("csi/kustomize/overlays/default")}).ok());
  ASSERT_TRUE(
      cluster()
          .Kubectl({"wait", "--for=condition=Established", "--timeout=60s",
                    "crd/cnsvolumeoperationrequests.cns.vmware.com",
                    "crd/csinodetopologies.cns.vmware.com", "crd/cnsvolumeinfoes.cns.vmware.com",
                    "crd/triggercsifullsyncs.cns.vmware.com",
                    "crd/cnsvspherevolumemigrations.cns.vmware.com"})
          .ok());
  RecordingClient rec(client());

  // CnsVolumeOperationRequest: a create that failed once, then succeeded.
  auto store = csi::NewKubeOperationStore(rec, kCsiNamespace);
  csi::OperationRecord r;
  r.name = "pvc-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0";
  r.task_id = "task-1042";
  r.vcenter = "vc-1.example.com";
  r.capacity_mb = 10240;
  r.invoked = absl::FromUnixSeconds(1796160000);
  ASSERT_TRUE(store->Put(r).ok());
  r.status = csi::kTaskError;
  r.error = "CnsFault: insufficient disk space on datastore(s) 'ds1'";
  r.error_count = 1;
  ASSERT_TRUE(store->Put(r).ok());
  r.status = csi::kTaskSuccess;
  r.error.clear();
  r.volume_id = "3f0d9c2e-8b1a-4d6e-9f7c-5a4b3c2d1e0f";
  r.task_id = "task-1043";
  ASSERT_TRUE(store->Put(r).ok());
  auto back = store->Get(r.name);
  ASSERT_TRUE(back.ok() && back->has_value()) << back.status();
  EXPECT_EQ((*back)->volume_id, r.volume_id);
  EXPECT_EQ((*back)->status, csi::kTaskSuccess);
  EXPECT_EQ((*back)->capacity_mb, 10240);
  EXPECT_EQ((*back)->error_count, 1);

  // CSINodeTopology: the node plugin's object, the syncer's Success and then Error.
  auto node =
      client().Create(kube::Nodes(), "",
                      {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "node-t"}}}});
  ASSERT_TRUE(node.ok());
  auto topo = rec.Create(csi::CsiNodeTopologies(), "",
                         csi::NewCsiNodeTopology("node-t", (*node)["metadata"]["uid"],
                                                 "4237a4a0-c7e1-4b0a-8bd8-1c39b8a3f001"));
  ASSERT_TRUE(topo.ok()) << topo.status();
  csi::NodeTopologyStatus ok;
  ok.status = "Success";
  ok.labels = {{"topology.csi.vmware.com/k8s-region", "region-1"},
               {"topology.csi.vmware.com/k8s-zone", "zone-a"}};
  auto topo2 = rec.Update(csi::CsiNodeTopologies(), csi::WithStatus(*topo, ok), "");
  ASSERT_TRUE(topo2.ok()) << topo2.status();
  csi::NodeTopologyStatus failed;
  failed.status = "Error";
  failed.error_message = "host c1-host-0 has no tag of category k8s-zone";
  ASSERT_TRUE(rec.Update(csi::CsiNodeTopologies(), csi::WithStatus(*topo2, failed), "").ok());

  // CnsVolumeInfo of a file volume in a second vCenter.
  csi::KubeVolumeInfos infos(rec, kCsiNamespace);
  ASSERT_TRUE(infos.Record("file:8c0a5f4e-1d2b-4c3a-9e8f-7a6b5c4d3e2f", "vc-2.example.com").ok());

  // CnsVSphereVolumeMigration: registered, then protected from VM deletion.
  csi::KubeVolumeMigrations migrations(rec);
  const std::string migrated = "1c2b3a49-5867-4f5e-8d7c-6b5a4f3e2d1c";
  ASSERT_TRUE(migrations.Save({"[ds1] kubevols/pv-legacy.vmdk", migrated, false}).ok());
  ASSERT_TRUE(migrations.MarkProtected(migrated).ok());

  // TriggerCsiFullSync: created at start, a sync asked for and reported.
  {
    csi::syncer::TriggerFullSyncController trigger(
        rec, [] { return absl::OkStatus(); }, nullptr);
    ASSERT_TRUE(trigger.Start().ok());
    ASSERT_TRUE(client()
                    .Patch(csi::syncer::TriggerCsiFullSyncs(), "", "csifullsync",
                           kube::PatchType::kMerge, {{"spec", {{"triggerSyncID", 1}}}})
                    .ok());
    json now;
    EXPECT_TRUE(WaitObject(
        client(), csi::syncer::TriggerCsiFullSyncs(), "", "csifullsync",
        [](const json& o) {
          return o["status"].value("lastTriggerSyncID", 0) == 1 &&
                 !o["status"].value("inProgress", true) &&
                 o["status"].contains("lastSuccessfulEndTimeStamp");
        },
        absl::Seconds(30), &now))
        << now.dump();
  }

  // The check itself: a member the CRD's schema does not know is pruned, and reported.
  auto pruned = rec.Create(
      csi::VolumeMigrationResource(), "",
      {{"apiVersion", "cns.vmware.com/v1alpha1"},
       {"kind", "CnsVSphereVolumeMigration"},
       {"metadata", {{"name", "probe"}}},
       {"spec",
        {{"volumeid", "probe"}, {"volumepath", "[ds1] probe.vmdk"}, {"notInTheSchema", "x"}}}});
  ASSERT_TRUE(pruned.ok()) << pruned.status();
  std::string why;
  EXPECT_FALSE(ContainsAll(rec.writes().back().stored, rec.writes().back().sent, "", &why));
  EXPECT_EQ(why, "/spec/notInTheSchema (absent)");
  ASSERT_TRUE(client().Delete(csi::VolumeMigrationResource(), "", "probe").ok());

  // Every write: what the server keeps now holds every member that was sent.
  std::vector<std::string> kinds;
  for (const RecordingClient::Write& w : rec.writes()) {
    if (w.name == "probe") continue;
    SCOPED_TRACE(absl::StrCat(w.verb, " ", w.resource.plural, " ", w.name));
    kinds.push_back(w.resource.plural);
    EXPECT_TRUE(w.status.ok()) << w.status;
    std::string missing;
    EXPECT_TRUE(ContainsAll(w.stored, w.sent, "", &missing))
        << "pruned or changed: " << missing << "\nsent " << w.sent.dump() << "\nstored "
        << w.stored.dump();
  }
  for (const char* kind : {"cnsvolumeoperationrequests", "csinodetopologies", "cnsvolumeinfoes",
                           "cnsvspherevolumemigrations", "triggercsifullsyncs"}) {
    EXPECT_NE(std::find(kinds.begin(), kinds.end(), kind), kinds.end()) << kind << " not written";
  }
}

// What the webhook's Pod would run with: deploy-webhook.sh's Secret, taken out of the server.
class Webhook {
 public:
  static absl::StatusOr<std::unique_ptr<Webhook>> Start(KubeCluster& cluster) {
    std::unique_ptr<Webhook> w(new Webhook());
    w->dir_ = cluster.dir() + "/webhook";
    std::filesystem::create_directories(w->dir_);
    for (const char* key : {"tls.crt", "tls.key"}) {
      auto data = cluster.Kubectl(
          {"-n", kCsiNamespace, "get", "secret", "vsphere-webhook-certs", "-o",
           absl::StrCat("jsonpath={.data.", absl::StrReplaceAll(key, {{".", "\\."}}), "}")});
      if (!data.ok()) return data.status();
      auto plain = Run({"/bin/sh", "-c", "printf %s '" + *data + "' | base64 -d"});
      if (!plain.ok()) return plain.status();
      integration::WriteFile(w->dir_ + "/" + key, *plain);
    }
    w->port_ = ::ccm::testing::FreePort();
    integration::WriteFile(
        w->dir_ + "/webhook.config",
        absl::StrCat("[WebHookConfig]\nport = \"", w->port_, "\"\ncert-file = \"", w->dir_,
                     "/tls.crt\"\nkey-file = \"", w->dir_, "/tls.key\"\n"));
    auto kc = cluster.KubeconfigFor(
        absl::StrCat("system:serviceaccount:", kCsiNamespace, ":vsphere-csi-webhook"),
        {"system:serviceaccounts", absl::StrCat("system:serviceaccounts:", kCsiNamespace)});
    if (!kc.ok()) return kc.status();
    auto p = ChildProcess::Start(
        {"/usr/bin/env", "-i", "X_CSI_MODE=syncer",
         "WEBHOOK_CONFIG_PATH=" + w->dir_ + "/webhook.config", "KUBECONFIG=" + *kc,
         absl::StrCat("CSI_NAMESPACE=", kCsiNamespace),
         BuildDir() + "/src/app/csi/vsphere-csi-driver", "--operation-mode=WEBHOOK_SERVER",
         "--fss-name=internal-feature-states.csi.vsphere.vmware.com",
         absl::StrCat("--fss-namespace=", kCsiNamespace)},
        w->dir_ + "/vsphere-webhook");
    if (!p.ok()) return p.status();
    w->process_ = *std::move(p);
    // The Service's endpoint: this machine's webhook (what the endpoints controller would write
    // for its Pod).
    auto ep = cluster.client().Create(
        kEndpoints(), kCsiNamespace,
        {{"apiVersion", "v1"},
         {"kind", "Endpoints"},
         {"metadata", {{"name", "vsphere-webhook-svc"}, {"namespace", kCsiNamespace}}},
         {"subsets",
          {{{"addresses", {{{"ip", kWebhookIp}}}}, {"ports", {{{"port", w->port_}}}}}}}});
    if (!ep.ok()) return ep.status();
    return w;
  }
  ChildProcess& process() { return *process_; }
  static const kube::Resource& kEndpoints() {
    static const kube::Resource r{"", "v1", "endpoints", "Endpoints", true};
    return r;
  }

 private:
  Webhook() = default;
  std::string dir_;
  int port_ = 0;
  std::unique_ptr<ChildProcess> process_;
};

json StorageClassWith(const std::string& name, const json& parameters) {
  return {{"apiVersion", "storage.k8s.io/v1"},
          {"kind", "StorageClass"},
          {"metadata", {{"name", name}}},
          {"provisioner", kDriver},
          {"parameters", parameters}};
}

TEST_F(ManifestsPeersTest, TheServerCallsTheWebhookThroughItsManifest) {
  ASSERT_TRUE(cluster().Kubectl({"apply", "-k", Deploy("csi/kustomize/overlays/default")}).ok());
  // The install script, as an operator runs it (its kubectl on this cluster).
  const std::string script = Deploy("csi/deploy-webhook.sh");
  auto installed = ::ccm::peers::Run({"/usr/bin/env", "KUBECONFIG=" + cluster().kubeconfig(),
                                      "PATH=/usr/local/bin:/usr/bin:/bin", "bash", script});
  ASSERT_TRUE(installed.ok()) << installed.status();
  auto webhook = Webhook::Start(cluster());
  ASSERT_TRUE(webhook.ok()) << webhook.status();
  ChildProcess& process = (*webhook)->process();

  // CSI migration's parameters on our StorageClass: denied with the reference's message, as the
  // server words a webhook's denial.
  absl::Status denied;
  ASSERT_TRUE(Eventually(
      [&] {
        denied = client()
                     .Create(kube::StorageClasses(), "",
                             StorageClassWith("migrating", {{"diskformat-migrationparam", "thin"}}))
                     .status();
        // Until the webhook serves, the server answers a failed call (failurePolicy Fail).
        return !absl::StrContains(denied.message(), "failed calling webhook");
      },
      absl::Seconds(30), absl::Milliseconds(200)))
      << denied << process.Stderr();
  EXPECT_TRUE(absl::StrContains(denied.message(),
                                "admission webhook \"validation.csi.vsphere.vmware.com\" denied "
                                "the request: Invalid StorageClass Parameters. Migration specific "
                                "parameters should not be used in the StorageClass"))
      << denied;
  EXPECT_FALSE(client().Get(kube::StorageClasses(), "", "migrating").ok());
  // An ordinary one is admitted.
  EXPECT_TRUE(client()
                  .Create(kube::StorageClasses(), "",
                          StorageClassWith("gold", {{"storagepolicyname", "gold"}}))
                  .ok());
  // A file volume's PV with node affinity: denied.
  json pv = json::parse(R"({
    "apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "rwx-pinned"},
    "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteMany"],
      "csi": {"driver": "csi.vsphere.vmware.com",
              "volumeHandle": "file:2b1c0d9e-8f7a-4b6c-9d5e-3f2a1b0c9d8e"},
      "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone-a"]}]}]}}}})");
  absl::Status pinned = client().Create(kube::PersistentVolumes(), "", pv).status();
  EXPECT_TRUE(absl::StrContains(pinned.message(), "File volumes cannot have node affinity rules"))
      << pinned;
  pv["spec"].erase("nodeAffinity");
  EXPECT_TRUE(client().Create(kube::PersistentVolumes(), "", pv).ok());
  // A claim's update and deletion pass through it too (allowed without snapshots).
  ASSERT_TRUE(client()
                  .Create(kube::PersistentVolumeClaims(), "default",
                          {{"apiVersion", "v1"},
                           {"kind", "PersistentVolumeClaim"},
                           {"metadata", {{"name", "data"}, {"namespace", "default"}}},
                           {"spec",
                            {{"accessModes", {"ReadWriteOnce"}},
                             {"storageClassName", "gold"},
                             {"resources", {{"requests", {{"storage", "1Gi"}}}}}}}})
                  .ok());
  EXPECT_TRUE(client().Delete(kube::PersistentVolumeClaims(), "default", "data").ok());

  // A claim with a VolumeSnapshot, whose PV goes with it: CNS would not let the volume go, so
  // its growth and its deletion are denied (the webhook reads the PV and the snapshots as its
  // ServiceAccount, under the manifest's ClusterRole); once the snapshot is gone, both pass.
  auto bin = BinDir();
  ASSERT_TRUE(bin.ok());
  if (!std::filesystem::exists(*bin + "/snapshot-crds")) {
    std::printf("no snapshot CRDs among the peers: the snapshot rules not checked\n");
    return;
  }
  ASSERT_TRUE(cluster()
                  .Kubectl({"apply", "-f",
                            *bin + "/snapshot-crds/snapshot.storage.k8s.io_volumesnapshots.yaml"})
                  .ok());
  ASSERT_TRUE(cluster()
                  .Kubectl({"wait", "--for=condition=Established", "--timeout=60s",
                            "crd/volumesnapshots.snapshot.storage.k8s.io"})
                  .ok());
  json grow_sc = StorageClassWith("growable", json::object());
  grow_sc["allowVolumeExpansion"] = true;
  ASSERT_TRUE(client().Create(kube::StorageClasses(), "", grow_sc).ok());
  ASSERT_TRUE(client()
                  .Create(kube::PersistentVolumes(), "",
                          json::parse(R"({"apiVersion": "v1", "kind": "PersistentVolume",
    "metadata": {"name": "pv-snapped"},
    "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
      "persistentVolumeReclaimPolicy": "Delete", "storageClassName": "growable",
      "claimRef": {"namespace": "default", "name": "snapped"},
      "csi": {"driver": "csi.vsphere.vmware.com",
              "volumeHandle": "7a6b5c4d-3e2f-4a1b-8c9d-0e1f2a3b4c5d"}}})"))
                  .ok());
  ASSERT_TRUE(client()
                  .Create(kube::PersistentVolumeClaims(), "default",
                          json::parse(R"({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
    "metadata": {"name": "snapped", "namespace": "default"},
    "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "growable",
      "volumeName": "pv-snapped", "resources": {"requests": {"storage": "1Gi"}}}})"))
                  .ok());
  // Bound, as the PV binder would leave it (only a bound claim may grow).
  ASSERT_TRUE(
      client()
          .Patch(kube::PersistentVolumeClaims(), "default", "snapped", kube::PatchType::kMerge,
                 {{"status", {{"phase", "Bound"}, {"capacity", {{"storage", "1Gi"}}}}}}, "status")
          .ok());
  ASSERT_TRUE(client()
                  .Create(VolumeSnapshots(), "default",
                          {{"apiVersion", "snapshot.storage.k8s.io/v1"},
                           {"kind", "VolumeSnapshot"},
                           {"metadata", {{"name", "nightly"}, {"namespace", "default"}}},
                           {"spec", {{"source", {{"persistentVolumeClaimName", "snapped"}}}}}})
                  .ok());
  const json grow = {{"spec", {{"resources", {{"requests", {{"storage", "2Gi"}}}}}}}};
  absl::Status grown = client()
                           .Patch(kube::PersistentVolumeClaims(), "default", "snapped",
                                  kube::PatchType::kMerge, grow)
                           .status();
  EXPECT_TRUE(absl::StrContains(grown.message(), "Expanding volume with snapshots is not allowed"))
      << grown << process.Stderr();
  absl::Status deleted = client().Delete(kube::PersistentVolumeClaims(), "default", "snapped");
  EXPECT_TRUE(absl::StrContains(deleted.message(), "Deleting volume with snapshots is not allowed"))
      << deleted;
  ASSERT_TRUE(client().Delete(VolumeSnapshots(), "default", "nightly").ok());
  EXPECT_TRUE(client()
                  .Patch(kube::PersistentVolumeClaims(), "default", "snapped",
                         kube::PatchType::kMerge, grow)
                  .ok());
  EXPECT_TRUE(client().Delete(kube::PersistentVolumeClaims(), "default", "snapped").ok());
}

}  // namespace
}  // namespace ccm::peers

int main(int argc, char** argv) {
  return ccm::peers::Main(argc, argv, "peers_manifests_test", {"etcd", "kube-apiserver"});
}
