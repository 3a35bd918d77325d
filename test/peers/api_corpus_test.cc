// The API corpus against the real kube-apiserver (issue 53 item 6). The corpus
// (test/fixtures/kube_emulator/testdata/api_corpus.jsonl) holds the requests of api_corpus_script
// with this server's answers; the emulator is checked against it in every test run
// (kube_emulator_test). Here:
//  - the committed corpus must have been recorded from the script as it is now;
//  - replayed against the real server, it must answer as recorded (the recording is current and
//    its normalization stable);
//  - PEERS_RECORD_API_CORPUS=1 records it again instead, writing the file in the source tree.
#include "fixtures/kube_emulator/api_corpus.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/http_client.h"
#include "gtest/gtest.h"
#include "peers/api_corpus_script.h"
#include "peers/kube_cluster.h"
#include "peers/peers.h"

namespace ccm::peers {
namespace {
using ::ccm::testing::CorpusCase;
using json = nlohmann::json;

std::string CorpusPath() {
  return SourceDir() + "/test/fixtures/kube_emulator/testdata/api_corpus.jsonl";
}

// The real server, as its cluster admin.
class ServerTarget final : public ::ccm::testing::CorpusTarget {
 public:
  explicit ServerTarget(KubeCluster& cluster) : server_(cluster.server()) {
    HttpClientOptions o;
    o.tls.ca_file = cluster.ca_file();
    o.tls.client_cert_file = cluster.dir() + "/peers-admin.crt";
    o.tls.client_key_file = cluster.dir() + "/peers-admin.key";
    http_ = std::make_unique<HttpClient>(o);
  }
  absl::StatusOr<HttpResponse> Send(const HttpRequest& request) override {
    HttpRequest r = request;
    r.url = server_ + r.url;
    return http_->Do(r);
  }
  // A version from before the server restarted: its watch caches began after it.
  std::string TooOldResourceVersion() override { return too_old_; }
  std::string too_old_;

 private:
  std::string server_;
  std::unique_ptr<HttpClient> http_;
};

std::vector<json> CsiCrds(KubeCluster& cluster) {
  auto out = cluster.Kubectl({"create", "--dry-run=client", "-o", "json", "-f",
                              SourceDir() + "/deploy/csi/kustomize/base/crds.yaml"});
  EXPECT_TRUE(out.ok()) << out.status();
  std::vector<json> crds;
  if (!out.ok()) return crds;
  // One JSON document per object, one after the other (or a List).
  std::istringstream in(*out);
  while (in >> std::ws && !in.eof()) {
    json doc;
    in >> doc;
    if (doc.value("kind", "") == "List") {
      for (json& item : doc["items"]) crds.push_back(std::move(item));
    } else {
      crds.push_back(std::move(doc));
    }
  }
  return crds;
}

// Only what the script decides: the requests.
json Requests(const CorpusCase& c) {
  json j = ::ccm::testing::CaseToJson(c);
  for (json& s : j["steps"]) s.erase("answer");
  return j;
}

TEST(ApiCorpusPeersTest, TheRecordingIsTheRealServersAnswers) {
  auto cluster = KubeCluster::Start("api-corpus");
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  // A version the restarted server's watch caches will not reach back to: one older than the
  // last write before the restart (the caches begin at the store's latest version).
  auto before = (*cluster)->client().Create(
      kube::ConfigMaps(), "default",
      {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "before-restart"}}}});
  ASSERT_TRUE(before.ok()) << before.status();
  auto ns = (*cluster)->client().Create(
      kube::Namespaces(), "",
      {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "corpus"}}}});
  ASSERT_TRUE(ns.ok()) << ns.status();
  // A restart: the watch caches now begin at the namespace's version.
  ASSERT_TRUE((*cluster)->RestartApiserver().ok());
  ServerTarget server(**cluster);
  server.too_old_ = (*before)["metadata"]["resourceVersion"];
  const std::vector<CorpusCase> script = ApiCorpusScript(CsiCrds(**cluster));

  if (const char* record = std::getenv("PEERS_RECORD_API_CORPUS"); record && *record == '1') {
    std::ofstream out(CorpusPath(), std::ios::trunc);
    for (CorpusCase c : script) {
      auto answers = ::ccm::testing::Replay(c, server);
      ASSERT_TRUE(answers.ok()) << answers.status();
      for (size_t i = 0; i < c.steps.size(); ++i) c.steps[i].answer = (*answers)[i];
      out << ::ccm::testing::CaseToJson(c).dump() << "\n";
    }
    std::printf("recorded %zu cases from kube-apiserver %s into %s\n", script.size(),
                VersionOf("kube-apiserver").c_str(), CorpusPath().c_str());
    return;
  }

  auto corpus = ::ccm::testing::LoadCorpus(CorpusPath());
  ASSERT_TRUE(corpus.ok()) << corpus.status();
  ASSERT_EQ(corpus->size(), script.size())
      << "the corpus is not the script's: record it again (PEERS_RECORD_API_CORPUS=1)";
  for (size_t i = 0; i < script.size(); ++i) {
    SCOPED_TRACE(script[i].name);
    EXPECT_EQ(Requests((*corpus)[i]), Requests(script[i]))
        << "the corpus is not the script's: record it again (PEERS_RECORD_API_CORPUS=1)";
    auto answers = ::ccm::testing::Replay((*corpus)[i], server);
    ASSERT_TRUE(answers.ok()) << answers.status();
    EXPECT_EQ(::ccm::testing::Differences((*corpus)[i], *answers,
                                          ::ccm::testing::Match::kExtraBookmarksAllowed),
              "");
  }
}

}  // namespace
}  // namespace ccm::peers

int main(int argc, char** argv) {
  return ccm::peers::Main(argc, argv, "peers_api_corpus_test", {"etcd", "kube-apiserver"});
}
