#include "integration/harness.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "testing/free_port.h"

namespace ccm::integration {

using nlohmann::json;

std::string SourceDir() {
  const char* s = std::getenv("CCM_SOURCE_DIR");
  return s != nullptr ? s : ".";
}

std::string CcmBinary() {
  const char* b = std::getenv("CCM_BINARY_DIR");
  return absl::StrCat(b != nullptr ? b : ".", "/src/app/ccm/vsphere-cloud-controller-manager");
}

std::string MakeTempDir(const std::string& name) {
  std::string tmpl =
      absl::StrCat(std::filesystem::temp_directory_path().string(), "/ccm-it-", name, "-XXXXXX");
  char* d = mkdtemp(tmpl.data());
  return d != nullptr ? std::string(d) : std::string("/tmp");
}

void RemoveTempDir(const std::string& dir) {
  std::error_code ec;
  if (!::testing::Test::HasFailure()) std::filesystem::remove_all(dir, ec);
}

void WriteFile(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
}

std::string SmbiosUuid(const std::string& u) {
  if (u.size() != 36) return u;
  auto swap = [&](int pos, int bytes) {
    std::string out;
    for (int i = bytes - 1; i >= 0; --i) out += u.substr(pos + 2 * i, 2);
    return out;
  };
  return absl::StrCat(swap(0, 4), "-", swap(9, 2), "-", swap(14, 2), u.substr(18));
}

json KubeletNode(const std::string& name, const std::string& bios_uuid) {
  const std::string now = absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::Now(), absl::UTCTimeZone());
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", name}, {"labels", {{"kubernetes.io/hostname", name}}}}},
          {"spec",
           {{"taints",
             {{{"key", "node.cloudprovider.kubernetes.io/uninitialized"},
               {"value", "true"},
               {"effect", "NoSchedule"}}}}}},
          {"status",
           {{"nodeInfo", {{"systemUUID", SmbiosUuid(bios_uuid)}}},
            {"conditions",
             {{{"type", "Ready"},
               {"status", "True"},
               {"reason", "KubeletReady"},
               {"lastHeartbeatTime", now},
               {"lastTransitionTime", now}}}}}}};
}

absl::StatusOr<HttpResponse> HttpsGet(const std::string& url) {
  static HttpClient* client = [] {
    HttpClientOptions o;
    o.tls.insecure = true;
    o.connect_timeout = absl::Seconds(2);
    o.timeout = absl::Seconds(10);
    return new HttpClient(o);
  }();
  HttpRequest r;
  r.url = url;
  return client->Do(r);
}

double MetricValue(const std::string& metrics, const std::string& prefix) {
  for (absl::string_view line : absl::StrSplit(metrics, '\n')) {
    if (!absl::StartsWith(line, prefix)) continue;
    auto sp = line.rfind(' ');
    double v = -1;
    if (sp != absl::string_view::npos && absl::SimpleAtod(line.substr(sp + 1), &v)) return v;
  }
  return -1;
}

std::string TestSpec() {
  json vms = json::array();
  for (int i = 1; i <= 4; ++i) {
    vms.push_back(
        {{"name", absl::StrCat("node-", i)},
         {"cluster", "c1"},
         {"nics", {{{"network", "VM Network"}, {"ips", {absl::StrCat("10.0.0.", 10 + i)}}}}}});
  }
  json spec = {{"users", {{kUserA, kPasswordA}, {kUserB, kPasswordB}}},
               // As a real vCenter: the property collector reports a session it does not know per
               // property (missingSet), not with a fault.
               {"session_form", "missingset"},
               {"datacenters",
                {{{"name", "dc1"}, {"clusters", {{{"name", "c1"}, {"hosts", 2}}}}, {"vms", vms}}}},
               {"tag_categories", {{{"name", "k8s-zone"}}, {{"name", "k8s-region"}}}},
               {"tags",
                {{{"name", "region-1"}, {"category", "k8s-region"}, {"attach", {"/dc1"}}},
                 {{"name", "zone-a"}, {"category", "k8s-zone"}, {"attach", {"/dc1/host/c1"}}}}}};
  return spec.dump();
}

absl::StatusOr<std::unique_ptr<Cluster>> Cluster::Start(const std::string& name,
                                                        const std::string& spec) {
  std::unique_ptr<Cluster> c(new Cluster());
  c->dir_ = MakeTempDir(name);
  auto vc = testing::VcsimProcess::Start(spec);
  if (!vc.ok()) return vc.status();
  c->vcsim_ = *std::move(vc);
  auto url = c->emu_.Start();
  if (!url.ok()) return url.status();
  c->kubeconfig_ = c->dir_ + "/kubeconfig";
  if (absl::Status s = c->emu_.WriteKubeconfig(c->kubeconfig_); !s.ok()) return s;
  const std::string hp = c->vcsim_->host_port();
  const std::string port = hp.substr(hp.rfind(':') + 1);
  c->config_path_ = c->dir_ + "/vsphere.conf";
  WriteFile(c->config_path_,
            absl::StrCat("global:\n  port: ", port, "\n  caFile: ", c->vcsim_->info().ca_file,
                         "\n  secretName: vsphere-cloud-secret\n"
                         "  secretNamespace: kube-system\n"
                         "vcenter:\n  vc-test:\n    server: 127.0.0.1\n"
                         "labels:\n  region: k8s-region\n  zone: k8s-zone\n"));
  if (absl::Status s = c->SetCredentials(kUserA, kPasswordA); !s.ok()) return s;
  return c;
}

Cluster::~Cluster() {
  emu_.Stop();
  vcsim_.reset();
  RemoveTempDir(dir_);
}

absl::Status Cluster::SetCredentials(const std::string& user, const std::string& password) {
  auto b64 = [](const std::string& s) {
    std::string out(4 * ((s.size() + 2) / 3) + 1, '\0');
    int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                            reinterpret_cast<const unsigned char*>(s.data()), s.size());
    out.resize(n);
    return out;
  };
  json secret = {
      {"apiVersion", "v1"},
      {"kind", "Secret"},
      {"metadata", {{"name", "vsphere-cloud-secret"}, {"namespace", "kube-system"}}},
      {"type", "Opaque"},
      {"data", {{"127.0.0.1.username", b64(user)}, {"127.0.0.1.password", b64(password)}}}};
  return emu_.Put("secrets", secret).status();
}

std::string Cluster::VmUuid(const std::string& vm) const {
  for (const auto& v : vcsim_->info().vms)
    if (v.name == vm) return v.uuid;
  return "";
}

absl::Status Cluster::RegisterNode(const std::string& vm) {
  return emu_.Create("nodes", KubeletNode(vm, VmUuid(vm))).status();
}

absl::Status Cluster::MarkNotReady(const std::string& node) {
  auto n = emu_.Get("nodes", "", node);
  if (!n.ok()) return n.status();
  const std::string now = absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::Now(), absl::UTCTimeZone());
  (*n)["status"]["conditions"] = json::array({{{"type", "Ready"},
                                               {"status", "Unknown"},
                                               {"reason", "NodeStatusUnknown"},
                                               {"message", "Kubelet stopped posting node status."},
                                               {"lastHeartbeatTime", now},
                                               {"lastTransitionTime", now}}});
  return emu_.Put("nodes", *n).status();
}

std::string Cluster::ProviderId(const std::string& node) const {
  auto n = emu_.Get("nodes", "", node);
  if (!n.ok()) return "";
  return n->value("spec", json::object()).value("providerID", "");
}

bool Cluster::NodeExists(const std::string& node) const { return emu_.Get("nodes", "", node).ok(); }

std::string Cluster::LeaseHolder() const {
  auto l = emu_.Get("leases", "kube-system", "cloud-controller-manager");
  if (!l.ok()) return "";
  return l->value("spec", json::object()).value("holderIdentity", "");
}

std::vector<std::string> Cluster::CcmArgs(int port, const std::vector<std::string>& extra) const {
  std::vector<std::string> a = {CcmBinary(),
                                "--cloud-provider=vsphere",
                                "--cloud-config=" + config_path_,
                                "--kubeconfig=" + kubeconfig_,
                                "--leader-elect=true",
                                "--leader-elect-lease-duration=4s",
                                "--leader-elect-renew-deadline=3s",
                                "--leader-elect-retry-period=1s",
                                "--node-monitor-period=1s",
                                "--bind-address=127.0.0.1",
                                absl::StrCat("--secure-port=", port),
                                "-v=2"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

absl::StatusOr<std::unique_ptr<ChildProcess>> Cluster::StartCcm(
    const std::string& name, int* port, const std::vector<std::string>& extra) {
  *port = FreePort();
  return ChildProcess::Start(CcmArgs(*port, extra), dir_ + "/" + name);
}

bool Cluster::WaitServing(ChildProcess& p, int port, absl::Duration timeout) {
  const std::string url = absl::StrCat("https://127.0.0.1:", port, "/healthz");
  return WaitFor([&] { return !p.Running() || HttpsGet(url).ok(); }, timeout) && p.Running();
}

}  // namespace ccm::integration
