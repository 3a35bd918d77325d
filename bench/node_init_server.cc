#include "node_init_server.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "kube/config.h"
#include "kube/objects.h"
#include "kube/resource.h"

namespace ccm::bench {

using nlohmann::json;

absl::StatusOr<Child> Child::Spawn(const std::vector<std::string>& argv, const std::string& log,
                                   bool pipe_stdout) {
  int fds[2] = {-1, -1};
  if (pipe_stdout && pipe(fds) != 0) return absl::InternalError("pipe");
  int log_fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) return absl::InternalError("open " + log);
  pid_t pid = fork();
  if (pid < 0) return absl::InternalError("fork");
  if (pid == 0) {
    dup2(pipe_stdout ? fds[1] : log_fd, 1);
    dup2(log_fd, 2);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(log_fd);
  Child c;
  c.pid = pid;
  if (pipe_stdout) {
    close(fds[1]);
    c.stdout_fd = fds[0];
  }
  return c;
}

std::string Child::ReadLine() const {
  std::string line;
  char ch;
  while (read(stdout_fd, &ch, 1) == 1 && ch != '\n') line += ch;
  return line;
}

void Child::Terminate() {
  if (pid <= 0) return;
  kill(pid, SIGTERM);
  for (int i = 0; i < 100; ++i) {
    if (waitpid(pid, nullptr, WNOHANG) == pid) {
      pid = -1;
      break;
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
  if (pid > 0) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    pid = -1;
  }
  if (stdout_fd >= 0) close(stdout_fd);
  stdout_fd = -1;
}

std::string BinaryPath(const char* env, const char* compiled_in) {
  const char* v = std::getenv(env);
  return v != nullptr && *v != '\0' ? v : compiled_in;
}

absl::Duration CpuTime(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t close = stat.rfind(')');
  if (close == std::string::npos) return absl::ZeroDuration();
  std::vector<std::string> f = absl::StrSplit(stat.substr(close + 2), ' ');
  long long ut = 0, st = 0;
  if (f.size() < 13 || !absl::SimpleAtoi(f[11], &ut) || !absl::SimpleAtoi(f[12], &st)) {
    return absl::ZeroDuration();
  }
  return absl::Seconds(static_cast<double>(ut + st) / sysconf(_SC_CLK_TCK));
}

namespace {

// What a kubelet reports besides its systemUUID: the node's capacity, its software and `images`
// pulled images (each with its digest and tag names), as in a real Node's status.
void AddKubeletStatus(json& status, int images) {
  const json resources = {{"cpu", "4"},
                          {"ephemeral-storage", "101430960Ki"},
                          {"hugepages-1Gi", "0"},
                          {"hugepages-2Mi", "0"},
                          {"memory", "16393500Ki"},
                          {"pods", "110"}};
  status["capacity"] = resources;
  status["allocatable"] = resources;
  status["daemonEndpoints"] = {{"kubeletEndpoint", {{"Port", 10250}}}};
  json& info = status["nodeInfo"];
  info["architecture"] = "amd64";
  info["bootID"] = "0d4a8c8e-6f6f-4a51-9c39-7a2f3f1c9b61";
  info["containerRuntimeVersion"] = "containerd://1.7.13";
  info["kernelVersion"] = "6.1.0-18-amd64";
  info["kubeProxyVersion"] = "v1.30.1";
  info["kubeletVersion"] = "v1.30.1";
  info["machineID"] = "4c4c4544003957108052b4c04f4e5a31";
  info["operatingSystem"] = "linux";
  info["osImage"] = "Debian GNU/Linux 12 (bookworm)";
  for (const char* type : {"MemoryPressure", "DiskPressure", "PIDPressure"}) {
    status["conditions"].push_back({{"type", type},
                                    {"status", "False"},
                                    {"lastHeartbeatTime", "2026-11-26T10:00:00Z"},
                                    {"lastTransitionTime", "2026-11-26T10:00:00Z"},
                                    {"reason", absl::StrCat("KubeletHas", "Sufficient", type)},
                                    {"message", "kubelet has sufficient resources available"}});
  }
  for (int i = 0; i < images; ++i) {
    const std::string repo = absl::StrCat("registry.example.com/team/image-", i);
    status["images"].push_back(
        {{"names",
          {absl::StrCat(repo, "@sha256:", std::string(64, static_cast<char>('a' + i % 6))),
           absl::StrCat(repo, ":v1.", i)}},
         {"sizeBytes", 25000000 + i * 1000003}});
  }
}

}  // namespace

json KubeletNode(const std::string& name, const std::string& system_uuid, int images) {
  json node = {{"apiVersion", "v1"},
               {"kind", "Node"},
               {"metadata", {{"name", name}, {"labels", {{"kubernetes.io/hostname", name}}}}},
               {"spec",
                {{"taints", json::array({{{"key", "node.cloudprovider.kubernetes.io/uninitialized"},
                                          {"value", "true"},
                                          {"effect", "NoSchedule"}}})}}},
               {"status",
                {{"nodeInfo", {{"systemUUID", system_uuid}}},
                 {"conditions", json::array({{{"type", "Ready"}, {"status", "True"}}})}}}};
  if (images > 0) AddKubeletStatus(node["status"], images);
  return node;
}

absl::StatusOr<std::unique_ptr<ApiServer>> ApiServer::StartEmulator(const std::string& dir) {
  std::unique_ptr<ApiServer> s(new ApiServer());
  s->kubeconfig_ = dir + "/kubeconfig";
  auto emu = Child::Spawn(
      {BinaryPath("NODE_BENCH_KUBE_EMULATOR", KUBE_EMULATOR_BINARY), "--listen", "127.0.0.1:0",
       "--kubeconfig-out", s->kubeconfig_, "--debug-listen", "127.0.0.1:0"},
      dir + "/emulator.log", /*pipe_stdout=*/true);
  if (!emu.ok()) return emu.status();
  s->emulator_ = *emu;
  s->pids_ = {emu->pid};
  json info = json::parse(emu->ReadLine(), nullptr, false);
  if (!info.is_object() || info.value("debug", "").empty()) {
    return absl::UnavailableError(
        absl::StrCat("kube-emulator did not start; see ", dir, "/emulator.log"));
  }
  s->debug_ = info.value("debug", "");
  return s;
}

absl::StatusOr<std::unique_ptr<ApiServer>> ApiServer::Connect(const std::string& kubeconfig,
                                                              std::vector<pid_t> pids) {
  std::unique_ptr<ApiServer> s(new ApiServer());
  s->kubeconfig_ = kubeconfig;
  s->pids_ = std::move(pids);
  absl::StatusOr<kube::Config> cfg = kube::LoadKubeconfig(kubeconfig);
  if (!cfg.ok()) return cfg.status();
  cfg->qps = 100000;
  cfg->burst = 100000;
  auto client = kube::RestClient::New(*cfg);
  if (!client.ok()) return client.status();
  s->client_ = *std::move(client);
  kube::ListOptions one;
  one.limit = 1;
  absl::StatusOr<kube::ListResult> nodes = s->client_->List(kube::Nodes(), "", one);
  if (!nodes.ok()) return nodes.status();
  if (!nodes->items.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        cfg->server, " already has Nodes (", kube::Name(nodes->items.front()),
        "): the bench creates and deletes Nodes and runs a cloud-node controller against a "
        "simulated vCenter; give it a throwaway API server (kube-apiserver and etcd) without "
        "Nodes"));
  }
  return s;
}

ApiServer::~ApiServer() { Stop(); }

bool ApiServer::Register(const std::vector<json>& bodies) {
  std::atomic<int> failed{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < 8; ++w) {
    threads.emplace_back([&, w] {
      for (size_t i = w; i < bodies.size(); i += 8) {
        if (client_ != nullptr) {
          if (!client_->Create(kube::Nodes(), "", bodies[i]).ok()) ++failed;
          continue;
        }
        auto r = http_.Do({.method = "PUT",
                           .url = debug_ + "/objects/nodes",
                           .headers = {{"Content-Type", "application/json"}},
                           .body = bodies[i].dump()});
        if (!r.ok() || r->status != 200) ++failed;
      }
    });
  }
  for (auto& th : threads) th.join();
  if (client_ != nullptr) {
    for (const json& b : bodies) registered_.push_back(b["metadata"]["name"].get<std::string>());
  }
  return failed == 0;
}

json ApiServer::Counters() {
  if (!emulated()) return json::object();
  auto r = http_.Do({.url = debug_ + "/counters"});
  return r.ok() ? json::parse(r->body, nullptr, false) : json();
}

absl::Status ApiServer::ResetCounters() {
  if (!emulated()) return absl::OkStatus();
  auto r = http_.Do({.method = "POST", .url = debug_ + "/counters/reset"});
  return r.ok() ? absl::OkStatus() : r.status();
}

double ApiServer::NodeWriteServeSeconds() {
  const json counters = Counters();
  if (!counters.is_object() || !counters.contains("serveSeconds")) return 0;
  const json& s = counters["serveSeconds"];
  return s.value("patch nodes/status", 0.0) + s.value("patch nodes", 0.0);
}

absl::Duration ApiServer::Cpu() const {
  absl::Duration d;
  for (pid_t p : pids_) d += CpuTime(p);
  return d;
}

void ApiServer::Stop() {
  emulator_.Terminate();
  if (client_ == nullptr || registered_.empty()) return;
  std::vector<std::thread> threads;
  for (int w = 0; w < 8; ++w) {
    threads.emplace_back([&, w] {
      for (size_t i = w; i < registered_.size(); i += 8) {
        (void)client_->Delete(kube::Nodes(), "", registered_[i]);
      }
    });
  }
  for (auto& th : threads) th.join();
  registered_.clear();
}

}  // namespace ccm::bench
