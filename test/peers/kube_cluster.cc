#include "peers/kube_cluster.h"

#include <openssl/pem.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/http_client.h"
#include "kube/config.h"
#include "peers/peers.h"
#include "testing/eventually.h"
#include "testing/free_port.h"

namespace ccm::peers {
namespace {
namespace fs = std::filesystem;
using integration::ChildProcess;

absl::Status WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return absl::InternalError("cannot write " + path);
  return absl::OkStatus();
}

// GET of `url`: its status code, 0 when nothing answered.
int Probe(HttpClient& http, const std::string& url, std::string* body = nullptr) {
  HttpRequest r;
  r.url = url;
  r.timeout = absl::Seconds(2);
  auto resp = http.Do(r);
  if (!resp.ok()) return 0;
  if (body != nullptr) *body = resp->body;
  return resp->status;
}

// The public half of a PEM private key, as a PEM "PUBLIC KEY" (kube-apiserver's
// --service-account-key-file reads public keys; PKCS#8 private keys it does not take there).
absl::StatusOr<std::string> PublicKeyPem(const std::string& private_pem) {
  BIO* in = BIO_new_mem_buf(private_pem.data(), static_cast<int>(private_pem.size()));
  EVP_PKEY* key = PEM_read_bio_PrivateKey(in, nullptr, nullptr, nullptr);
  BIO_free(in);
  if (key == nullptr) return absl::InternalError("cannot read the service-account key");
  BIO* out = BIO_new(BIO_s_mem());
  PEM_write_bio_PUBKEY(out, key);
  char* data = nullptr;
  const long n = BIO_get_mem_data(out, &data);
  std::string pem(data, n);
  BIO_free(out);
  EVP_PKEY_free(key);
  return pem;
}

}  // namespace

void RemoveOrphanStores(const std::string& dir) {
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    std::vector<std::string> parts = absl::StrSplit(name, '-');
    int pid = 0;
    if (parts.size() != 4 || parts[0] != "peers" || parts[1] != "etcd" ||
        !absl::SimpleAtoi(parts[2], &pid) || pid <= 0) {
      continue;
    }
    if (kill(pid, 0) != 0 && errno == ESRCH) fs::remove_all(e.path(), ec);
  }
}

absl::Status WriteKubeconfig(const std::string& path, const std::string& server,
                             const std::string& ca_file, const std::string& cert_file,
                             const std::string& key_file) {
  return WriteText(path, absl::StrCat("apiVersion: v1\nkind: Config\nclusters:\n- name: peers\n"
                                      "  cluster:\n    server: ",
                                      server, "\n    certificate-authority: ", ca_file,
                                      "\nusers:\n- name: user\n  user:\n"
                                      "    client-certificate: ",
                                      cert_file, "\n    client-key: ", key_file,
                                      "\ncontexts:\n- name: peers\n  context:\n"
                                      "    cluster: peers\n    user: user\n"
                                      "current-context: peers\n"));
}

absl::StatusOr<std::unique_ptr<KubeCluster>> KubeCluster::Start(const std::string& name,
                                                                KubeClusterOptions options) {
  std::unique_ptr<KubeCluster> c(new KubeCluster());
  c->dir_ = MakeDir(name);
  if (c->dir_.empty()) return absl::InternalError("cannot make a directory under /tmp");
  auto ca = ::ccm::testing::kube::GenerateCa("peers-ca");
  if (!ca.ok()) return ca.status();
  c->ca_ = *ca;
  c->ca_file_ = c->dir_ + "/ca.crt";
  if (auto s = WriteText(c->ca_file_, ca->cert_pem); !s.ok()) return s;
  if (auto s = c->StartEtcd(); !s.ok()) return s;
  if (auto s = c->StartApiserver(options); !s.ok()) return s;
  auto kc = c->KubeconfigFor("peers-admin", {"system:masters"});
  if (!kc.ok()) return kc.status();
  c->kubeconfig_ = *kc;
  auto config = kube::LoadKubeconfig(c->kubeconfig_);
  if (!config.ok()) return config.status();
  config->qps = 1000;
  config->burst = 1000;
  auto client = kube::RestClient::New(*config);
  if (!client.ok()) return client.status();
  c->client_ = *std::move(client);
  if (auto s = c->WaitReady(absl::Seconds(90)); !s.ok()) return s;
  return c;
}

KubeCluster::~KubeCluster() {
  // The controllers first, then the server, then its store.
  kcm_.reset();
  apiserver_.reset();
  etcd_.reset();
  std::error_code ec;
  if (!etcd_data_.empty()) fs::remove_all(etcd_data_, ec);
  RemoveDir(dir_);
}

absl::Status KubeCluster::StartEtcd() {
  auto etcd = Program("etcd");
  if (!etcd.ok()) return etcd.status();
  etcd_port_ = ::ccm::testing::FreePort();
  const int peer_port = ::ccm::testing::FreePort();
  const std::string client_url = absl::StrCat("http://127.0.0.1:", etcd_port_);
  const std::string peer_url = absl::StrCat("http://127.0.0.1:", peer_port);
  // The store lives in memory: a test's etcd needs no durability, and fsyncs on a busy disk
  // would slow every write of the server.
  RemoveOrphanStores("/dev/shm");
  etcd_data_ = absl::StrCat("/dev/shm/peers-etcd-", getpid(), "-", etcd_port_);
  const std::string& data = etcd_data_;
  auto p = ChildProcess::Start(
      {*etcd, "--name=peers", "--data-dir=" + data, "--listen-client-urls=" + client_url,
       "--advertise-client-urls=" + client_url, "--listen-peer-urls=" + peer_url,
       "--initial-advertise-peer-urls=" + peer_url, "--initial-cluster=peers=" + peer_url,
       "--log-level=warn"},
      dir_ + "/etcd");
  if (!p.ok()) return p.status();
  etcd_ = *std::move(p);
  HttpClient http(HttpClientOptions{});
  std::string body;
  if (!::ccm::testing::Eventually(
          [&] {
            return !etcd_->Running() || (Probe(http, client_url + "/health", &body) == 200 &&
                                         absl::StrContains(body, "true"));
          },
          absl::Seconds(60), absl::Milliseconds(50)) ||
      !etcd_->Running()) {
    return absl::UnavailableError("etcd did not start: " + etcd_->Stderr());
  }
  return absl::OkStatus();
}

absl::Status KubeCluster::StartApiserver(const KubeClusterOptions& options) {
  auto bin = Program("kube-apiserver");
  if (!bin.ok()) return bin.status();
  auto server = ::ccm::testing::kube::IssueCert(ca_, "kube-apiserver", {}, /*server=*/true,
                                                {"localhost", "kubernetes.default.svc"},
                                                {"127.0.0.1", "10.0.0.1"});
  auto sa = ::ccm::testing::kube::GenerateCa("service-accounts");  // its key signs the tokens
  if (!server.ok()) return server.status();
  if (!sa.ok()) return sa.status();
  auto sa_pub = PublicKeyPem(sa->key_pem);
  if (!sa_pub.ok()) return sa_pub.status();
  for (const auto& [file, text] :
       std::vector<std::pair<std::string, std::string>>{{"/server.crt", server->cert_pem},
                                                        {"/server.key", server->key_pem},
                                                        {"/sa.key", sa->key_pem},
                                                        {"/sa.pub", *sa_pub}}) {
    if (auto s = WriteText(dir_ + file, text); !s.ok()) return s;
  }
  const int port = ::ccm::testing::FreePort();
  server_ = absl::StrCat("https://127.0.0.1:", port);
  std::vector<std::string> argv = {
      *bin,
      absl::StrCat("--etcd-servers=http://127.0.0.1:", etcd_port_),
      "--bind-address=127.0.0.1",
      "--advertise-address=127.0.0.1",
      absl::StrCat("--secure-port=", port),
      "--tls-cert-file=" + dir_ + "/server.crt",
      "--tls-private-key-file=" + dir_ + "/server.key",
      "--client-ca-file=" + ca_file_,
      "--service-account-key-file=" + dir_ + "/sa.pub",
      "--service-account-signing-key-file=" + dir_ + "/sa.key",
      "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
      "--service-cluster-ip-range=10.0.0.0/24",
      "--authorization-mode=Node,RBAC",
      "--endpoint-reconciler-type=none",
      "--allow-privileged=true",
      "--profiling=false"};
  argv.insert(argv.end(), options.apiserver_flags.begin(), options.apiserver_flags.end());
  apiserver_argv_ = argv;
  auto p = ChildProcess::Start(argv, dir_ + "/kube-apiserver");
  if (!p.ok()) return p.status();
  apiserver_ = *std::move(p);
  return absl::OkStatus();
}

absl::Status KubeCluster::RestartApiserver() {
  apiserver_->Signal(SIGTERM);
  if (!apiserver_->WaitExit(absl::Seconds(30)))
    return absl::DeadlineExceededError("kube-apiserver did not stop");
  auto p = ChildProcess::Start(apiserver_argv_, dir_ + "/kube-apiserver-restarted");
  if (!p.ok()) return p.status();
  apiserver_ = *std::move(p);
  return WaitReady(absl::Seconds(90));
}

absl::Status KubeCluster::WaitReady(absl::Duration timeout) {
  HttpClientOptions o;
  o.tls.ca_file = ca_file_;
  o.tls.client_cert_file = dir_ + "/peers-admin.crt";
  o.tls.client_key_file = dir_ + "/peers-admin.key";
  HttpClient http(o);
  std::string body;
  // /healthz is ok once the post-start hooks ran (RBAC's bootstrap roles among them).
  bool ok = ::ccm::testing::Eventually(
      [&] {
        return !apiserver_->Running() ||
               (Probe(http, server_ + "/healthz", &body) == 200 && body == "ok" &&
                client_->Get(kube::Namespaces(), "", "default").ok());
      },
      timeout, absl::Milliseconds(100));
  if (!ok || !apiserver_->Running()) {
    const std::string err = apiserver_->Stderr();
    return absl::UnavailableError(
        absl::StrCat("kube-apiserver not healthy (/healthz: ", body,
                     "): ", err.size() > 3000 ? err.substr(err.size() - 3000) : err));
  }
  return absl::OkStatus();
}

std::string KubeCluster::version() const { return VersionOf("kube-apiserver"); }

absl::StatusOr<std::string> KubeCluster::KubeconfigFor(const std::string& user,
                                                       const std::vector<std::string>& groups) {
  auto cert = ::ccm::testing::kube::IssueCert(ca_, user, groups, /*server=*/false, {}, {});
  if (!cert.ok()) return cert.status();
  std::string file = user;
  for (char& ch : file) {
    if (ch == ':') ch = '_';
  }
  const std::string base = dir_ + "/" + file;
  if (auto s = WriteText(base + ".crt", cert->cert_pem); !s.ok()) return s;
  if (auto s = WriteText(base + ".key", cert->key_pem); !s.ok()) return s;
  if (auto s =
          WriteKubeconfig(base + ".kubeconfig", server_, ca_file_, base + ".crt", base + ".key");
      !s.ok()) {
    return s;
  }
  return base + ".kubeconfig";
}

absl::Status KubeCluster::StartControllerManager(const std::vector<std::string>& controllers,
                                                 const std::vector<std::string>& flags) {
  auto bin = Program("kube-controller-manager");
  if (!bin.ok()) return bin.status();
  std::vector<std::string> args = {"--leader-elect=false", "--secure-port=0",
                                   "--controllers=" + absl::StrJoin(controllers, ","),
                                   "--use-service-account-credentials=false"};
  args.insert(args.end(), flags.begin(), flags.end());
  auto p = StartWithKubeconfig("kube-controller-manager", *bin, args);
  if (!p.ok()) return p.status();
  kcm_ = *std::move(p);
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<ChildProcess>> KubeCluster::StartWithKubeconfig(
    const std::string& name, const std::string& program, std::vector<std::string> args) {
  std::vector<std::string> argv = {program, "--kubeconfig=" + kubeconfig_};
  argv.insert(argv.end(), args.begin(), args.end());
  return ChildProcess::Start(argv, dir_ + "/" + name);
}

absl::StatusOr<std::string> KubeCluster::Kubectl(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"/usr/bin/kubectl", "--kubeconfig=" + kubeconfig_};
  argv.insert(argv.end(), args.begin(), args.end());
  return Run(argv);
}

absl::Status KubeCluster::Apply(const std::string& yaml) {
  static int counter = 0;
  const std::string path = absl::StrCat(dir_, "/apply-", ++counter, ".yaml");
  if (auto s = WriteText(path, yaml); !s.ok()) return s;
  return Kubectl({"apply", "-f", path}).status();
}

}  // namespace ccm::peers
