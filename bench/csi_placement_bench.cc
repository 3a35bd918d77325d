// CSI placement benchmark (issue 19): a vCenter of 1,000 ESXi hosts (10 clusters of 100) and 100
// datastores (90 shared by every host, 10 host-local), 50 node VMs spread over the clusters and a
// storage policy that 30 shared datastores satisfy. Prints, asserts nothing:
//  - placement time: ChooseDatastores on the controller's in-memory view (node VMs' hosts from
//    the VM cache), without and with the policy's verdicts, averaged over many calls;
//  - vCenter requests per CreateVolume through the real socket, by method, with the policy: the
//    first create reads the policies (SPBM), the others are served from the cache, so placement
//    itself costs no request (what remains: the CNS name look-up, the create and its task).
//
//   csi_placement_bench [creates=50]
#include <cstdio>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "controller_env.h"
#include "csi/core/placement.h"

namespace {

using ccm::csi::testing::ControllerEnv;
constexpr int kClusters = 10, kHostsPerCluster = 100, kShared = 90, kLocal = 10, kNodes = 50;
constexpr int kPolicyDatastores = 30;

std::string Spec() {
  std::string clusters, vms, datastores, policy;
  for (int c = 0; c < kClusters; ++c) {
    absl::StrAppend(&clusters, c ? "," : "", R"({"name": "c)", c, R"(", "hosts": )",
                    kHostsPerCluster, "}");
  }
  for (int i = 0; i < kNodes; ++i) {
    absl::StrAppend(&vms, i ? "," : "", R"({"name": "node-)", i, R"(", "cluster": "c)",
                    i % kClusters, R"(", "host_index": )", (i * 7) % kHostsPerCluster, "}");
  }
  for (int i = 0; i < kShared; ++i) {
    absl::StrAppend(&datastores, i ? "," : "", R"({"name": "shared-)", i, R"(", "capacity_mb": )",
                    200000 + i * 1000, "}");
    if (i < kPolicyDatastores) absl::StrAppend(&policy, i ? "," : "", R"("shared-)", i, R"(")");
  }
  for (int i = 0; i < kLocal; ++i) {
    absl::StrAppend(&datastores, R"(,{"name": "local-)", i, R"(", "capacity_mb": 9000000,)",
                    R"( "hosts": ["c)", i, R"(-host-0"]})");
  }
  return absl::StrCat(R"({"users": {"csi-user": "csi-pass"}, "datacenters": [{"name": "dc1",)",
                      R"( "clusters": [)", clusters, R"(], "vms": [)", vms, R"(], "datastores": [)",
                      datastores, R"(]}], "storage_policies": [{"name": "bench-gold",)",
                      R"( "datastores": [)", policy, "]}]}");
}

// Average microseconds of ChooseDatastores over `rounds` calls.
double PlacementMicros(const ccm::csi::InventorySnapshot& view,
                       const ccm::csi::PlacementRequest& req, int rounds) {
  const absl::Time start = absl::Now();
  size_t chosen = 0;
  for (int i = 0; i < rounds; ++i) {
    auto r = ccm::csi::ChooseDatastores(view.datastores, view.hosts, req);
    chosen += r.ok() ? r->size() : 0;
  }
  const double us = absl::ToDoubleMicroseconds(absl::Now() - start) / rounds;
  if (chosen == 0) std::printf("   (no datastore qualified)\n");
  return us;
}

}  // namespace

int main(int argc, char** argv) {
  const int creates = argc > 1 ? std::atoi(argv[1]) : 50;
  const absl::Time setup = absl::Now();
  auto env_or = ControllerEnv::Start(Spec());
  if (!env_or.ok()) {
    std::fprintf(stderr, "start: %s\n", env_or.status().ToString().c_str());
    return 1;
  }
  ControllerEnv& env = **env_or;
  auto view = env.backend().datastores().Snapshot();
  if (!view.ok()) return 1;
  std::printf("csi_placement_bench: %zu hosts, %zu datastores, %d node VMs (set-up %.1f s)\n",
              (*view)->hosts.size(), (*view)->datastores.size(), kNodes,
              absl::ToDoubleSeconds(absl::Now() - setup));

  ccm::csi::PlacementRequest req;
  req.size_mib = 1024;
  for (const auto& vm : env.sim().info().vms) {
    auto facts = env.backend().vcenters()[0].vms->FindByUuid(vm.uuid);
    if (facts.ok()) req.node_hosts.push_back({vm.name, "vc1", facts->host.value});
  }
  std::printf("\n== placement (pure, from memory)\n   no policy: %.1f us per CreateVolume\n",
              PlacementMicros(**view, req, 200));
  std::vector<bool> compatible((*view)->datastores.size());
  for (size_t i = 0; i < compatible.size(); ++i) compatible[i] = i % 3 == 0;
  req.compatible = &compatible;
  std::printf("   with a policy's verdicts: %.1f us\n", PlacementMicros(**view, req, 200));

  (void)env.sim().ResetCounters();
  std::map<std::string, int> first;
  for (int i = 0; i < creates; ++i) {
    auto r = ccm::csi::testing::CreateReq(absl::StrCat("pvc-place-", i), 1024 * 1024 * 1024);
    (*r.mutable_parameters())["storagepolicyname"] = "bench-gold";
    grpc::ClientContext ctx;
    ::csi::v1::CreateVolumeResponse resp;
    grpc::Status s = env.controller().CreateVolume(&ctx, r, &resp);
    if (!s.ok()) std::printf("   create %d: %s\n", i, s.error_message().c_str());
    if (i == 0) {
      first = env.sim().SoapCounters().value_or(std::map<std::string, int>{});
      (void)env.sim().ResetCounters();
    }
  }
  std::printf("\n== CreateVolume with storagepolicyname, vCenter requests\n   the first:");
  for (const auto& [m, c] : first) std::printf(" %s %d", m.c_str(), c);
  auto rest = env.sim().SoapCounters().value_or(std::map<std::string, int>{});
  int total = 0;
  std::printf("\n   each of the next %d:", creates - 1);
  for (const auto& [m, c] : rest) {
    total += c;
    std::printf(" %s %.2f", m.c_str(), double(c) / std::max(1, creates - 1));
  }
  auto cns = env.sim().CnsCounters().value_or(std::map<std::string, int>{});
  std::printf(
      "\n   (%.2f vim25/PBM requests per create; CNS calls in all: CnsQueryVolume %d, "
      "CnsCreateVolume %d)\n",
      double(total) / std::max(1, creates - 1), cns["CnsQueryVolume"], cns["CnsCreateVolume"]);
  return 0;
}
