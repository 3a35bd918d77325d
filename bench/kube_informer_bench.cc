// Informer throughput and memory against the in-process API server emulator:
//   list:   10,000 Nodes LISTed in pages of 500 into an informer (objects/s)
//   watch:  10,000 Node updates delivered through the watch to a handler (objects/s)
//   memory: resident memory growth per cached Node
// Not a test: it prints numbers. Usage: kube_informer_bench [nodes]
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "fixtures/kube_emulator/kube_emulator.h"
#include "kube/client.h"
#include "kube/informer.h"

namespace {

double RssMiB() {
  std::ifstream f("/proc/self/statm");
  long pages = 0, rss = 0;
  f >> pages >> rss;
  return static_cast<double>(rss) * sysconf(_SC_PAGESIZE) / (1024.0 * 1024.0);
}

nlohmann::json NodeObject(int i, int gen) {
  std::string name = absl::StrCat("node-", i);
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata",
           {{"name", name},
            {"labels",
             {{"kubernetes.io/hostname", name},
              {"kubernetes.io/os", "linux"},
              {"node.kubernetes.io/instance-type", "vsphere-vm.cpu-4.mem-16gb.os-ubuntu"},
              {"topology.kubernetes.io/zone", "zone-a"},
              {"bench/gen", absl::StrCat(gen)}}},
            {"annotations", {{"node.alpha.kubernetes.io/ttl", "0"}}}}},
          {"spec",
           {{"providerID",
             absl::StrCat("vsphere://4237", 10000000 + i, "-aaaa-bbbb-cccc-dddddddddddd")},
            {"podCIDR", "10.244.0.0/24"}}},
          {"status",
           {{"addresses",
             {{{"type", "InternalIP"}, {"address", absl::StrCat("10.0.", i / 250, ".", i % 250)}},
              {{"type", "Hostname"}, {"address", name}}}},
            {"conditions",
             {{{"type", "Ready"},
               {"status", "True"},
               {"reason", "KubeletReady"},
               {"message", "kubelet is posting ready status"}}}},
            {"nodeInfo",
             {{"systemUUID", "422e4956-ad22-1139-6d72-59cc8f26bc90"},
              {"kubeletVersion", "v1.29.0"},
              {"osImage", "Ubuntu 22.04.3 LTS"}}}}}};
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 10000;
  ccm::testing::KubeEmulator emu;
  ccm::testing::KubeEmulatorOptions eo;
  eo.history_size = 4 * n;
  auto url = emu.Start(eo);
  if (!url.ok()) {
    std::fprintf(stderr, "emulator: %s\n", std::string(url.status().message()).c_str());
    return 1;
  }
  for (int i = 0; i < n; ++i) (void)emu.Put("nodes", NodeObject(i, 0));
  std::string kc = absl::StrCat("/tmp/kube_informer_bench-", getpid(), ".kubeconfig");
  (void)emu.WriteKubeconfig(kc);
  auto cfg = ccm::kube::LoadKubeconfig(kc);
  std::remove(kc.c_str());
  if (!cfg.ok()) return 1;
  cfg->qps = 0;  // measure the client, not the limiter
  auto client = ccm::kube::RestClient::New(*cfg);
  if (!client.ok()) return 1;

  double rss_before = RssMiB();
  std::atomic<int64_t> updates{0};
  ccm::kube::Informer inf(**client, ccm::kube::Nodes(), {});
  inf.AddEventHandler({nullptr, [&](const auto&, const auto&) { updates.fetch_add(1); }, nullptr});
  absl::Time t0 = absl::Now();
  inf.Start();
  if (!inf.WaitForSync(absl::Minutes(5))) return 1;
  double list_s = absl::ToDoubleSeconds(absl::Now() - t0);
  double rss_after = RssMiB();

  absl::Time t1 = absl::Now();
  for (int i = 0; i < n; ++i) (void)emu.Put("nodes", NodeObject(i, 1));
  absl::Time deadline = absl::Now() + absl::Minutes(5);
  while (updates.load() < n && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(1));
  double watch_s = absl::ToDoubleSeconds(absl::Now() - t1);
  inf.Stop();

  std::printf("kube_informer_bench: %d Nodes\n", n);
  std::printf("  list (paged 500) into informer: %.3f s, %.0f objects/s\n", list_s, n / list_s);
  std::printf(
      "  watch updates delivered:        %lld in %.3f s, %.0f objects/s (incl. server writes)\n",
      static_cast<long long>(updates.load()), watch_s, updates.load() / watch_s);
  std::printf("  memory per cached Node:         %.2f KiB (RSS %.1f -> %.1f MiB)\n",
              (rss_after - rss_before) * 1024.0 / n, rss_before, rss_after);
  return updates.load() >= n ? 0 : 1;
}
