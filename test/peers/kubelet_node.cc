#include "peers/kubelet_node.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace ccm::peers {
namespace {
using json = nlohmann::json;

std::string Now() {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::Now(), absl::UTCTimeZone());
}

// 4237a4a0-c7e1-... -> a0a43742-e1c7-...: the first three groups byte-swapped.
std::string Smbios(const std::string& u) {
  if (u.size() != 36) return u;
  auto swap = [&](int at, int len) {
    std::string out;
    for (int i = at + len - 2; i >= at; i -= 2) out += u.substr(i, 2);
    return out;
  };
  return absl::StrCat(swap(0, 8), "-", swap(9, 4), "-", swap(14, 4), u.substr(18));
}

json Condition(const std::string& type, const std::string& status, const std::string& reason,
               const std::string& message) {
  const std::string now = Now();
  return {{"type", type},       {"status", status},         {"reason", reason},
          {"message", message}, {"lastHeartbeatTime", now}, {"lastTransitionTime", now}};
}

json Images(const std::string& node, int n) {
  json images = json::array();
  for (int i = 0; i < n; ++i) {
    const std::string repo = absl::StrCat("registry.example.com/team-", i % 7, "/app-", i);
    images.push_back({{"names",
                       {absl::StrCat(repo, "@sha256:", std::string(56, 'a' + i % 6),
                                     absl::Hex(i, absl::kZeroPad8)),
                        absl::StrCat(repo, ":v1.", i)}},
                      {"sizeBytes", 10'000'000 + 1'000'003LL * i}});
  }
  return images;
}

}  // namespace

json KubeletNode(const KubeletNodeOptions& o) {
  json annotations = {{"node.alpha.kubernetes.io/ttl", "0"},
                      {"volumes.kubernetes.io/controller-managed-attach-detach", "true"}};
  if (!o.node_ip.empty()) annotations["alpha.kubernetes.io/provided-node-ip"] = o.node_ip;
  json resources = {{"cpu", "2"},
                    {"ephemeral-storage", "50254368Ki"},
                    {"hugepages-2Mi", "0"},
                    {"memory", "4025176Ki"},
                    {"pods", "110"}};
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata",
           {{"name", o.name},
            {"labels",
             {{"beta.kubernetes.io/arch", "amd64"},
              {"beta.kubernetes.io/os", "linux"},
              {"kubernetes.io/arch", "amd64"},
              {"kubernetes.io/hostname", o.name},
              {"kubernetes.io/os", "linux"}}},
            {"annotations", annotations}}},
          {"spec",
           {{"taints",
             {{{"key", "node.cloudprovider.kubernetes.io/uninitialized"},
               {"value", "true"},
               {"effect", "NoSchedule"}}}}}},
          {"status",
           {{"capacity", resources},
            {"allocatable", resources},
            {"conditions",
             {Condition("MemoryPressure", "False", "KubeletHasSufficientMemory",
                        "kubelet has sufficient memory available"),
              Condition("DiskPressure", "False", "KubeletHasNoDiskPressure",
                        "kubelet has no disk pressure"),
              Condition("PIDPressure", "False", "KubeletHasSufficientPID",
                        "kubelet has sufficient PID available"),
              Condition("Ready", "True", "KubeletReady", "kubelet is posting ready status")}},
            {"daemonEndpoints", {{"kubeletEndpoint", {{"Port", 10250}}}}},
            {"nodeInfo",
             {{"machineID", std::string(32, '7')},
              {"systemUUID", Smbios(o.bios_uuid)},
              {"bootID", "8c6f3c4e-2f1a-4c53-9d0e-5f4b8f2f1a01"},
              {"kernelVersion", "6.1.0-27-amd64"},
              {"osImage", "Debian GNU/Linux 12 (bookworm)"},
              {"containerRuntimeVersion", "containerd://1.6.20"},
              {"kubeletVersion", "v1.24.0"},
              {"kubeProxyVersion", "v1.24.0"},
              {"operatingSystem", "linux"},
              {"architecture", "amd64"}}},
            {"images", Images(o.name, o.images)}}}};
}

json NotReadyConditions() {
  return json::array(
      {Condition("Ready", "Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status.")});
}

}  // namespace ccm::peers
