// vsphere-csi-driver as the validating admission webhook (X_CSI_MODE=syncer
// --operation-mode=WEBHOOK_SERVER, the reference's vsphere-webhook container arguments): over
// TLS with the certificate of its config file, it refuses CSI migration's parameters on our
// StorageClasses and the deletion of a PVC with VolumeSnapshots (read from the API emulator),
// allows the rest, picks up a rotated certificate, stops on SIGTERM, and refuses a bad config
// naming its line.
#include <httplib.h>
#include <openssl/pem.h>
#include <signal.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "app/shared/self_signed.h"
#include "fixtures/kube_emulator/kube_emulator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/child_process.h"
#include "testing/eventually.h"
#include "testing/free_port.h"

namespace ccm::csi::webhook_testing {
namespace {

using ::ccm::integration::ChildProcess;
using ::ccm::testing::Eventually;
using ::testing::HasSubstr;
using Json = nlohmann::json;

class WebhookBinaryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/csi-webhook-XXXXXX";
    dir_ = mkdtemp(tmpl);
    ASSERT_TRUE(emu_.Start().ok());
    ASSERT_TRUE(emu_.WriteKubeconfig(dir_ + "/kubeconfig").ok());
    ASSERT_TRUE(emu_.Create("namespaces", {{"metadata", {{"name", "ns1"}}}}).ok());
    ASSERT_TRUE(
        emu_.Create("persistentvolumes", {{"metadata", {{"name", "pv-1"}}},
                                          {"spec", {{"persistentVolumeReclaimPolicy", "Delete"}}}})
            .ok());
    ASSERT_TRUE(emu_.Create("volumesnapshots",
                            {{"metadata", {{"name", "snap-1"}, {"namespace", "ns1"}}},
                             {"spec", {{"source", {{"persistentVolumeClaimName", "data"}}}}}})
                    .ok());
    port_ = ccm::testing::FreePort();
    WriteCertificate();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A new self-signed certificate for 127.0.0.1 in cert.pem / key.pem; its PEM.
  std::string WriteCertificate() {
    absl::StatusOr<app::KeyPair> kp = app::MakeSelfSigned("localhost");
    EXPECT_TRUE(kp.ok()) << kp.status();
    std::ofstream(dir_ + "/tls.crt") << kp->cert_pem;
    FILE* f = fopen((dir_ + "/tls.key").c_str(), "w");
    PEM_write_PrivateKey(f, kp->key.get(), nullptr, nullptr, 0, nullptr, nullptr);
    fclose(f);
    return kp->cert_pem;
  }
  void WriteConfig(const std::string& extra = "") {
    std::ofstream(dir_ + "/webhook.config")
        << "[WebHookConfig]\nport = \"" << port_ << "\"\ncert-file = \"" << dir_
        << "/tls.crt\"\nkey-file = \"" << dir_ << "/tls.key\"\n"
        << extra;
  }
  absl::StatusOr<std::unique_ptr<ChildProcess>> StartWebhook() {
    return ChildProcess::Start(
        {"/usr/bin/env", "-i", "X_CSI_MODE=syncer",
         "WEBHOOK_CONFIG_PATH=" + dir_ + "/webhook.config", CSI_DRIVER_BINARY,
         "--operation-mode=WEBHOOK_SERVER",
         "--fss-name=internal-feature-states.csi.vsphere.vmware.com",
         "--fss-namespace=vmware-system-csi", "--kubeconfig=" + dir_ + "/kubeconfig"},
        dir_ + "/webhook");
  }
  // POST /validate trusting only `ca_pem`; the review's response, or null when the TLS
  // connection (or the answer) failed.
  Json Review(const Json& request, const std::string& ca_pem) {
    const std::string ca_file = dir_ + "/ca.pem";
    std::ofstream(ca_file) << ca_pem;
    httplib::SSLClient client("127.0.0.1", port_);
    client.set_ca_cert_path(ca_file.c_str());
    client.enable_server_certificate_verification(true);
    const Json review = {
        {"apiVersion", "admission.k8s.io/v1"}, {"kind", "AdmissionReview"}, {"request", request}};
    auto res = client.Post("/validate", review.dump(), "application/json");
    if (!res || res->status != 200) return nullptr;
    return Json::parse(res->body, nullptr, false).value("response", Json());
  }

  std::string dir_;
  int port_ = 0;
  ccm::testing::KubeEmulator emu_;
};

Json StorageClassRequest(Json params) {
  return {{"uid", "sc-1"},
          {"kind", {{"group", "storage.k8s.io"}, {"version", "v1"}, {"kind", "StorageClass"}}},
          {"operation", "CREATE"},
          {"object",
           {{"metadata", {{"name", "fast"}}},
            {"provisioner", "csi.vsphere.vmware.com"},
            {"parameters", params}}}};
}

TEST_F(WebhookBinaryTest, JudgesOverTlsAndReloadsItsCertificate) {
  WriteConfig();
  std::string cert = WriteCertificate();
  auto p = StartWebhook();
  ASSERT_TRUE(p.ok()) << p.status();
  ChildProcess& webhook = **p;
  Json denied;
  ASSERT_TRUE(Eventually([&] {
    denied = Review(StorageClassRequest({{"diskformat-migrationparam", "thin"}}), cert);
    return !denied.is_null();
  })) << webhook.Stderr();
  EXPECT_EQ(denied["uid"], "sc-1");
  EXPECT_EQ(denied["allowed"], false);
  EXPECT_THAT(denied["status"]["message"].get<std::string>(),
              HasSubstr("Migration specific parameters should not be used"));
  EXPECT_EQ(Review(StorageClassRequest({{"storagepolicyname", "gold"}}), cert)["allowed"], true);

  // A PVC with a VolumeSnapshot and a PV that would be deleted with it: refused, from the API.
  const Json pvc = {{"metadata", {{"name", "data"}, {"namespace", "ns1"}}},
                    {"spec", {{"accessModes", {"ReadWriteOnce"}}, {"volumeName", "pv-1"}}}};
  const Json del = {{"uid", "pvc-1"},
                    {"kind", {{"kind", "PersistentVolumeClaim"}}},
                    {"operation", "DELETE"},
                    {"oldObject", pvc}};
  Json refused = Review(del, cert);
  EXPECT_EQ(refused["allowed"], false) << refused.dump();
  EXPECT_THAT(refused.dump(), HasSubstr("snap-1"));
  ASSERT_TRUE(emu_.Delete("volumesnapshots", "ns1", "snap-1").ok());
  EXPECT_EQ(Review(del, cert)["allowed"], true);
  // Every API call it made is granted to it by its manifest's ClusterRole.
  std::set<std::string> granted;  // "verb resource"
  for (const YAML::Node& d :
       YAML::LoadAllFromFile(CCM_SOURCE_DIR "/manifests/vsphere-csi-webhook.yaml")) {
    if (!d.IsMap() || !d["kind"] || d["kind"].as<std::string>() != "ClusterRole") continue;
    for (const auto& rule : d["rules"])
      for (const auto& r : rule["resources"])
        for (const auto& v : rule["verbs"])
          granted.insert(v.as<std::string>() + " " + r.as<std::string>());
  }
  int calls = 0;
  for (const auto& [key, count] : emu_.RequestCounts()) {
    if (absl::StartsWith(key, "get discovery")) continue;
    EXPECT_TRUE(granted.count(key)) << key << " is not granted to vsphere-csi-webhook";
    ++calls;
  }
  EXPECT_GE(calls, 3);  // get persistentvolumes, get namespaces, list volumesnapshots

  // The Secret is updated with a new certificate: the webhook serves it.
  const std::string rotated = WriteCertificate();
  ASSERT_TRUE(Eventually([&] {
    return !Review(StorageClassRequest(Json::object()), rotated).is_null();
  })) << webhook.Stderr();
  EXPECT_TRUE(Review(StorageClassRequest(Json::object()), cert).is_null());  // the old one: gone

  // Issue 43: the API server hangs (its watches are held); SIGTERM still ends it within 5 s.
  emu_.InjectDelay({.delay = absl::InfiniteDuration()});
  webhook.Signal(SIGTERM);
  EXPECT_EQ(webhook.WaitExit(absl::Seconds(5)), 0) << webhook.Stderr();
  emu_.ClearFaults();
}

TEST_F(WebhookBinaryTest, RefusesABadConfigNamingTheLine) {
  WriteConfig("colour = \"blue\"\n");
  auto p = StartWebhook();
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ((*p)->WaitExit(absl::Seconds(20)), 1);
  EXPECT_THAT((*p)->Stderr(), HasSubstr("webhook.config:5: unknown key \"colour\""));
}

// `vsphere-csi-driver diagnose` reads csi-vsphere.conf as the driver does: a broken one is exit
// code 1 with the line; a healthy one has ok config lines.
TEST_F(WebhookBinaryTest, DiagnoseReadsTheDriversConfig) {
  auto run = [&](const std::string& conf) {
    std::ofstream(dir_ + "/csi-vsphere.conf") << conf;
    auto p = ChildProcess::Start(
        {"/usr/bin/env", "-i", "VSPHERE_CSI_CONFIG=" + dir_ + "/csi-vsphere.conf",
         CSI_DRIVER_BINARY, "diagnose"},
        dir_ + "/diagnose");
    EXPECT_TRUE(p.ok()) << p.status();
    const int code = (*p)->WaitExit(absl::Seconds(10)).value_or(-1);
    return std::make_pair(code, (*p)->Stdout());
  };
  auto [ok, ok_out] =
      run("[Global]\ncluster-id = \"c1\"\n[VirtualCenter \"vc.example.com\"]\nuser = \"u\"\n"
          "password = \"p\"\ndatacenters = \"dc1\"\n");
  // The config's lines are ok; vc.example.com does not resolve here (the vCenter checks are
  // tested against the simulator in test/integration/diagnose_test.cc).
  EXPECT_EQ(ok, 1) << ok_out;
  EXPECT_THAT(ok_out, HasSubstr("ok      config vc.example.com   vc.example.com:443, dc1"));
  EXPECT_THAT(ok_out, HasSubstr("cannot resolve vc.example.com"));
  auto [bad, bad_out] = run("[VirtualCenter \"vc1\"]\nport = \"x\"\n");
  EXPECT_EQ(bad, 1) << bad_out;
  EXPECT_THAT(bad_out, HasSubstr("csi-vsphere.conf:2"));
}

}  // namespace
}  // namespace ccm::csi::webhook_testing
