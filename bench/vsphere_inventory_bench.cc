// How many vCenter requests does it take to know 1,000 VMs and the zone/region tags of all their
// ancestors? Starts the simulator fixture with 1,000 generated VMs, loads the inventory cache,
// resolves every VM's ancestry and fetches the tags of all ancestors in one batch, then prints
// the simulator's request counters per method, wall times and peak RSS (after the load and at
// the end).
//
//   vsphere_inventory_bench [--vms N]
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/logging.h"
#include "fixtures/vcsim/sim_client_options.h"
#include "fixtures/vcsim/vcsim_process.h"
#include "testing/static_credentials.h"
#include "vsphere/ancestry.h"
#include "vsphere/client.h"
#include "vsphere/inventory_cache.h"
#include "vsphere/tagging.h"

namespace ccm::vsphere {
namespace {

std::string Spec(int vms) {
  return absl::StrCat(R"({
  "datacenters": [{
    "name": "dc1",
    "clusters": [{"name": "c1", "hosts": 8, "resource_pools": ["rp1"]}],
    "generate_vms": {"count": )",
                      vms, R"(, "prefix": "gen-", "cluster": "c1",
                     "subnet": "10.1.0.0/16", "network": "VM Network"}
  }],
  "tag_categories": [{"name": "k8s-zone", "cardinality": "SINGLE"},
                     {"name": "k8s-region", "cardinality": "SINGLE"}],
  "tags": [
    {"name": "region-1", "category": "k8s-region", "attach": ["/dc1"]},
    {"name": "zone-a", "category": "k8s-zone", "attach": ["/dc1/host/c1"]},
    {"name": "zone-h0", "category": "k8s-zone", "attach": ["/dc1/host/c1/c1-host-0"]}
  ]
})");
}

long PeakRssKb() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

// Nearest ancestor in `chain` carrying a tag of `category`.
std::string Resolve(const std::vector<InventoryRef>& chain,
                    const std::map<Moref, std::vector<Tag>>& tags, const std::string& category) {
  for (const InventoryRef& r : chain) {
    auto it = tags.find(r.ref);
    if (it == tags.end()) continue;
    for (const Tag& t : it->second) {
      if (t.category_name == category) return t.name;
    }
  }
  return "";
}

int Run(int vm_count) {
  logging::Init(0);
  absl::Time t_start = absl::Now();
  auto sim = ccm::testing::VcsimProcess::Start(Spec(vm_count));
  if (!sim.ok()) {
    std::fprintf(stderr, "cannot start the simulator: %s\n", sim.status().ToString().c_str());
    return 1;
  }
  absl::Duration sim_start = absl::Now() - t_start;
  if (auto s = (*sim)->ResetCounters(); !s.ok()) {
    std::fprintf(stderr, "reset counters: %s\n", s.ToString().c_str());
    return 1;
  }

  StaticCredentialSource creds(Credentials{"user", Secret("pass")});
  ClientOptions co = ccm::testing::SimClientOptions((*sim)->info(), /*for_tests=*/false);
  Client client(co, &creds);

  // 1. Inventory cache: every VM's facts, then kept current by WaitForUpdatesEx.
  absl::Time t0 = absl::Now();
  InventoryCache cache(client);
  cache.Start();
  if (!cache.WaitForSync(absl::Minutes(5))) {
    std::fprintf(stderr, "inventory cache did not sync: %s\n",
                 cache.stats().last_error.ToString().c_str());
    return 1;
  }
  auto vms = cache.Snapshot();
  if (!vms.ok()) return 1;
  absl::Duration load = absl::Now() - t0;
  // The load's transient memory (the WaitForUpdatesEx answer is parsed as it streams in) shows
  // here, before ancestry and tags add their own.
  const long peak_after_load = PeakRssKb();

  // 2. Ancestry of every VM (host, cluster, folders, datacenter, resource pools).
  absl::Time t1 = absl::Now();
  std::vector<Moref> refs;
  for (const VmFacts& vm : *vms) refs.push_back(vm.moref);
  AncestryResolver resolver(client);
  auto ancestry = resolver.ResolveVms(refs);
  if (!ancestry.ok()) {
    std::fprintf(stderr, "ancestry: %s\n", ancestry.status().ToString().c_str());
    return 1;
  }
  absl::Duration anc = absl::Now() - t1;

  // 3. Tags of all distinct ancestors in one batch.
  absl::Time t2 = absl::Now();
  std::set<Moref> unique;
  for (const VmAncestry& a : *ancestry) {
    for (const auto* chain : {&a.host_chain, &a.resource_pool_chain, &a.vm_chain}) {
      for (const InventoryRef& r : *chain) unique.insert(r.ref);
    }
  }
  TaggingOptions to;
  to.server = "127.0.0.1";
  to.url = co.url;
  to.http.tls.ca_file = co.tls.ca_file;
  TaggingClient tagging(to, creds);
  auto tags = tagging.ListAttachedTags(std::vector<Moref>(unique.begin(), unique.end()));
  if (!tags.ok()) {
    std::fprintf(stderr, "tags: %s\n", tags.status().ToString().c_str());
    return 1;
  }
  std::map<Moref, std::vector<Tag>> by_object;
  for (ObjectTags& o : *tags) by_object[o.object] = std::move(o.tags);
  std::map<std::string, int> zones;
  int with_region = 0;
  for (const VmAncestry& a : *ancestry) {
    std::vector<InventoryRef> chain = a.host_chain;
    chain.insert(chain.end(), a.resource_pool_chain.begin(), a.resource_pool_chain.end());
    chain.insert(chain.end(), a.vm_chain.begin(), a.vm_chain.end());
    ++zones[Resolve(chain, by_object, "k8s-zone")];
    if (!Resolve(chain, by_object, "k8s-region").empty()) ++with_region;
  }
  absl::Duration tag_time = absl::Now() - t2;
  absl::Duration total = absl::Now() - t0;

  auto soap = (*sim)->SoapCounters();
  auto rest = (*sim)->RestCounters();
  if (!soap.ok() || !rest.ok()) return 1;
  int soap_total = 0, rest_total = 0;
  std::printf("vsphere_inventory_bench: %zu VMs, %zu distinct ancestors\n", vms->size(),
              unique.size());
  std::printf("vCenter requests (simulator counters):\n");
  for (const auto& [m, n] : *soap) {
    std::printf("  SOAP %-40s %d\n", m.c_str(), n);
    soap_total += n;
  }
  for (const auto& [m, n] : *rest) {
    std::printf("  REST %-40s %d\n", m.c_str(), n);
    rest_total += n;
  }
  std::printf("  total: %d SOAP + %d REST = %d\n", soap_total, rest_total, soap_total + rest_total);
  std::printf("zones: ");
  for (const auto& [z, n] : zones) std::printf("%s=%d ", z.empty() ? "<none>" : z.c_str(), n);
  std::printf("; with region: %d\n", with_region);
  std::printf("wall time: cache load %s, ancestry %s, tags %s, total %s (simulator start %s)\n",
              absl::FormatDuration(load).c_str(), absl::FormatDuration(anc).c_str(),
              absl::FormatDuration(tag_time).c_str(), absl::FormatDuration(total).c_str(),
              absl::FormatDuration(sim_start).c_str());
  std::printf("peak RSS: %ld KiB after the cache load, %ld KiB at the end\n", peak_after_load,
              PeakRssKb());
  cache.Stop();
  return 0;
}

}  // namespace
}  // namespace ccm::vsphere

int main(int argc, char** argv) {
  int vms = 1000;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--vms") == 0) vms = std::atoi(argv[i + 1]);
  }
  return ccm::vsphere::Run(vms);
}
