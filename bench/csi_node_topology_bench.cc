// CSINodeTopology at scale (issue 44): N node VMs (default 1,000) on 32 hosts in 8 zone-tagged
// clusters of the simulator, N CSINodeTopology objects created in the API emulator as the node
// plugins create them, and the syncer's controller (the production classes: VM stream, datastore
// inventory with host tags, NodeTopologyController) answering every one. Prints, at the syncer's
// defaults (its Kubernetes client at 20 qps / 30 burst) and unthrottled: the vCenter requests
// (SOAP by method, tagging REST) to load and then to answer every node, the time until every
// object is Success, and the API requests. Goal: no vCenter request per node. Asserts nothing.
//
//   csi_node_topology_bench [nodes=1000]
#include <iostream>
#include <map>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "csi/controller/datastore_inventory.h"
#include "csi/controller/node_vm_topology.h"
#include "csi/crd/csinodetopology.h"
#include "csi/syncer/node_topology_controller.h"
#include "fixtures/kube_emulator/kube_emulator.h"
#include "fixtures/vcsim/sim_client_options.h"
#include "fixtures/vcsim/vcsim_process.h"
#include "kube/client.h"
#include "kube/config.h"
#include "testing/eventually.h"
#include "testing/static_credentials.h"
#include "vsphere/inventory_cache.h"

namespace ccm::csi {
namespace {

constexpr int kClusters = 8, kHostsPerCluster = 4;

std::string Spec(int nodes) {
  std::string clusters, vms, tags;
  for (int c = 0; c < kClusters; ++c) {
    absl::StrAppend(&clusters, c ? "," : "", R"({"name": "c)", c, R"(", "hosts": )",
                    kHostsPerCluster, "}");
    absl::StrAppend(&tags, R"(,{"name": "zone-)", c, R"(", "category": "k8s-zone", "attach": )",
                    R"(["/dc1/host/c)", c, R"("]})");
  }
  for (int i = 0; i < nodes; ++i) {
    absl::StrAppend(&vms, i ? "," : "", R"({"name": "node-)", i, R"(", "cluster": "c)",
                    i % kClusters, R"(", "host_index": )", (i / kClusters) % kHostsPerCluster, "}");
  }
  return absl::StrCat(
      R"({"users": {"u": "p"}, "datacenters": [{"name": "dc1", "clusters": [)", clusters,
      R"(], "vms": [)", vms, R"(], "datastores": [{"name": "ds"}]}],)",
      R"( "tag_categories": [{"name": "k8s-zone"}, {"name": "k8s-region"}],)",
      R"( "tags": [{"name": "region-1", "category": "k8s-region", "attach": ["/dc1"]})", tags,
      "]}");
}

int Total(const std::map<std::string, int>& m) {
  int n = 0;
  for (const auto& [k, v] : m) n += v;
  return n;
}

void PrintCounts(const char* what, const std::map<std::string, int>& soap,
                 const std::map<std::string, int>& rest) {
  std::cout << "  " << what << ": " << Total(soap) + Total(rest) << " vCenter requests (SOAP";
  for (const auto& [k, v] : soap) std::cout << " " << k << "=" << v;
  std::cout << "; tagging REST " << Total(rest) << ")\n";
}

std::map<std::string, int> Minus(std::map<std::string, int> a,
                                 const std::map<std::string, int>& b) {
  for (const auto& [k, v] : b) a[k] -= v;
  std::erase_if(a, [](const auto& kv) { return kv.second == 0; });
  return a;
}

void Run(testing::VcsimProcess& sim, int nodes, bool unthrottled) {
  std::cout << (unthrottled ? "unthrottled" : "defaults (20 qps / 30 burst)") << ":\n";
  testing::KubeEmulator emu;
  if (!emu.Start().ok()) return;
  const std::string kc = absl::StrCat("/tmp/node-topology-bench-", getpid(), ".kubeconfig");
  (void)emu.WriteKubeconfig(kc);
  auto cfg = kube::LoadKubeconfig(kc);
  if (!cfg.ok()) return;
  if (unthrottled) cfg->qps = 0;
  auto client = kube::RestClient::New(*cfg);
  if (!client.ok()) return;
  nlohmann::json crd = {{"apiVersion", "apiextensions.k8s.io/v1"},
                        {"kind", "CustomResourceDefinition"},
                        {"metadata", {{"name", kCsiNodeTopologyCrd}}},
                        {"spec", {{"group", "cns.vmware.com"}, {"scope", "Cluster"}}}};
  (void)emu.Create("customresourcedefinitions", crd);
  for (const auto& vm : sim.info().vms) {  // as the node plugins create them
    (void)emu.Create("csinodetopologies", NewCsiNodeTopology(vm.name, "", vm.uuid));
  }
  (void)sim.ResetCounters();
  vsphere::StaticCredentialSource creds{{"u", Secret("p")}};
  vsphere::ClientOptions co = testing::SimClientOptions(sim.info());
  vsphere::Client vim(co, &creds);
  vsphere::TaggingOptions to;
  to.server = "127.0.0.1";
  to.url = co.url;
  to.http.tls = co.tls;
  vsphere::TaggingClient tagging(to, creds);
  vsphere::InventoryCache vms(vim);
  DatastoreInventoryOptions dio;
  dio.topology.topology_categories = {"k8s-region", "k8s-zone"};
  DatastoreInventory hosts({{"vc1", &vim, &tagging, {}, nullptr}}, dio);
  NodeVmTopologyFromVCenter source({{"vc1", &vms}}, &hosts);
  syncer::NodeTopologyControllerOptions no;
  no.topology = dio.topology;
  syncer::NodeTopologyController controller(**client, source, no);

  const absl::Time start = absl::Now();
  vms.Start();
  hosts.Start();
  (void)vms.WaitForSync(absl::Minutes(2));
  (void)hosts.WaitForLoad(absl::Minutes(2));
  const absl::Duration load = absl::Now() - start;
  auto soap0 = sim.SoapCounters().value_or(std::map<std::string, int>{});
  auto rest0 = sim.RestCounters().value_or(std::map<std::string, int>{});
  PrintCounts(
      absl::StrCat("load (VM stream and host tags, ", absl::FormatDuration(load), ")").c_str(),
      soap0, rest0);
  const absl::Time answer_start = absl::Now();
  controller.Start();
  int success = 0;
  testing::Eventually(
      [&] {
        success = 0;
        auto list = (*client)->List(CsiNodeTopologies(), "", {});
        if (!list.ok()) return false;
        for (const auto& o : list->items) {
          success += ParseCsiNodeTopology(o).status.status == kNodeTopologySuccess;
        }
        return success == nodes;
      },
      absl::Minutes(10), absl::Milliseconds(200));
  const absl::Duration answered = absl::Now() - answer_start;
  auto soap1 = Minus(sim.SoapCounters().value_or(std::map<std::string, int>{}), soap0);
  auto rest1 = Minus(sim.RestCounters().value_or(std::map<std::string, int>{}), rest0);
  std::cout << "  " << success << " of " << nodes << " CSINodeTopology Success after "
            << absl::FormatDuration(answered) << " (status writes: " << controller.stats().writes
            << ")\n";
  PrintCounts("while answering (the streams' long polls included)", soap1, rest1);
  controller.Stop();
  hosts.Stop();
  vms.Stop();
  emu.Stop();
}

}  // namespace
}  // namespace ccm::csi

int main(int argc, char** argv) {
  int nodes = 1000;
  if (argc > 1 && !absl::SimpleAtoi(argv[1], &nodes)) return 2;
  auto sim = ccm::testing::VcsimProcess::Start(ccm::csi::Spec(nodes));
  if (!sim.ok()) {
    std::cerr << sim.status() << "\n";
    return 1;
  }
  std::cout << "CSINodeTopology for " << nodes << " node VMs on "
            << ccm::csi::kClusters * ccm::csi::kHostsPerCluster << " hosts (" << ccm::csi::kClusters
            << " zones)\n";
  ccm::csi::Run(**sim, nodes, false);
  ccm::csi::Run(**sim, nodes, true);
  return 0;
}
