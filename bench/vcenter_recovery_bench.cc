// How long after vCenter answers again is the provider healthy again? Starts the simulator with
// N generated VMs (1,000 by default) in the "missingset" session form (as a real vCenter), runs
// the inventory cache with its production defaults, then repeats faults and prints, per fault,
// the time from "vCenter answers again" to "inventory synced" (min / median / max), the failed
// attempts during the outage and the VMs the resync reported as removed (must be 0: no delete
// storm). Faults: restart after an outage of --down seconds (connections refused meanwhile), a
// blackhole of the same length (accepts, never answers), and the server forgetting the session.
// The silent faults (blackhole, forgotten session) are noticed only when the stream's wait ends:
// up to maxWaitSeconds (+ 10 s for the blackhole); --max-wait S sets it (default: production's).
//
//   vcenter_recovery_bench [--vms N] [--rounds R] [--down S] [--max-wait S]
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/logging.h"
#include "fixtures/vcsim/sim_client_options.h"
#include "fixtures/vcsim/vcsim_process.h"
#include "testing/static_credentials.h"
#include "vsphere/client.h"
#include "vsphere/credential_source.h"
#include "vsphere/inventory_cache.h"

namespace ccm::vsphere {
namespace {

std::string Spec(int vms) {
  return absl::StrCat(R"({"session_form": "missingset", "datacenters": [{"name": "dc1",
    "clusters": [{"name": "c1", "hosts": 8}],
    "generate_vms": {"count": )",
                      vms, R"(, "prefix": "gen-", "cluster": "c1",
                     "subnet": "10.1.0.0/16", "network": "VM Network"}}]})");
}

struct Round {
  double recovery_ms;
  uint64_t failed_attempts;
};

void Print(const std::string& fault, std::vector<Round> rounds, int removed) {
  std::sort(rounds.begin(), rounds.end(),
            [](const Round& a, const Round& b) { return a.recovery_ms < b.recovery_ms; });
  uint64_t attempts = 0;
  for (const Round& r : rounds) attempts = std::max(attempts, r.failed_attempts);
  std::printf(
      "%-34s recovery min %7.0f ms  median %7.0f ms  max %7.0f ms  "
      "(max failed attempts per outage %llu, VMs reported removed %d)\n",
      fault.c_str(), rounds.front().recovery_ms, rounds[rounds.size() / 2].recovery_ms,
      rounds.back().recovery_ms, static_cast<unsigned long long>(attempts), removed);
}

bool WaitUntil(const std::function<bool()>& cond, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!cond()) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(2));
  }
  return true;
}

int Run(int vms, int rounds, absl::Duration down, int max_wait_seconds) {
  auto sim = ccm::testing::VcsimProcess::Start(Spec(vms));
  if (!sim.ok()) {
    std::fprintf(stderr, "vcsim: %s\n", sim.status().ToString().c_str());
    return 1;
  }
  StaticCredentialSource creds(Credentials{"user", Secret("pass")});
  Client client(ccm::testing::SimClientOptions((*sim)->info(), /*for_tests=*/false), &creds);
  InventoryCacheOptions io;  // production defaults but for maxWaitSeconds
  io.max_wait_seconds = max_wait_seconds;
  InventoryCache cache(client, io);
  const absl::Duration notice = absl::Seconds(max_wait_seconds) + absl::Seconds(60);
  std::atomic<int> removed{0};
  cache.AddListener([&](const std::string&, VmChangeKind k) {
    if (k == VmChangeKind::kRemoved) ++removed;
  });
  cache.Start();
  if (!cache.WaitForSync(absl::Seconds(60))) {
    std::fprintf(stderr, "first sync failed: %s\n", cache.stats().last_error.ToString().c_str());
    return 1;
  }
  std::printf(
      "vcenter_recovery_bench: %d VMs, %d rounds per fault, outages of %s, maxWaitSeconds %d\n",
      vms, rounds, absl::FormatDuration(down).c_str(), max_wait_seconds);

  struct Fault {
    std::string name;
    std::function<absl::Status()> start, clear;
  };
  std::vector<Fault> faults = {
      {absl::StrCat("restart after ", absl::FormatDuration(down), " refused"),
       [&] {
         (*sim)->Stop();
         return absl::OkStatus();
       },
       [&] { return (*sim)->Restart(); }},
      {absl::StrCat("blackhole for ", absl::FormatDuration(down)),
       [&] { return (*sim)->SetFault("blackhole"); }, [&] { return (*sim)->SetFault("none"); }},
      {"session forgotten by the server", [&] { return (*sim)->InvalidateSessions(); },
       [] { return absl::OkStatus(); }},
  };
  for (const Fault& f : faults) {
    std::vector<Round> results;
    removed = 0;
    for (int i = 0; i < rounds; ++i) {
      const uint64_t failed_before = cache.stats().failed_attempts;
      const uint64_t resyncs_before = cache.stats().resyncs;
      if (absl::Status s = f.start(); !s.ok()) {
        std::fprintf(stderr, "%s: %s\n", f.name.c_str(), s.ToString().c_str());
        return 1;
      }
      absl::Time cleared;
      if (f.name.rfind("session", 0) == 0) {
        cleared = absl::Now();  // nothing to wait for: the next call finds out
      } else {
        // Hold the fault for `down` after the cache noticed it (a blackhole takes up to
        // maxWaitSeconds + 10 s to notice).
        if (!WaitUntil([&] { return !cache.synced(); }, notice)) {
          std::fprintf(stderr, "%s: the cache never noticed\n", f.name.c_str());
          return 1;
        }
        absl::SleepFor(down);
        if (absl::Status s = f.clear(); !s.ok()) {
          std::fprintf(stderr, "%s: %s\n", f.name.c_str(), s.ToString().c_str());
          return 1;
        }
        cleared = absl::Now();
      }
      if (!WaitUntil([&] { return cache.synced() && cache.stats().resyncs > resyncs_before; },
                     notice + absl::Seconds(60))) {
        std::fprintf(stderr, "%s: not synced again: %s\n", f.name.c_str(),
                     cache.stats().last_error.ToString().c_str());
        return 1;
      }
      results.push_back({absl::ToDoubleMilliseconds(absl::Now() - cleared),
                         cache.stats().failed_attempts - failed_before});
    }
    Print(f.name, results, removed);
  }
  cache.Stop();
  return 0;
}

}  // namespace
}  // namespace ccm::vsphere

int main(int argc, char** argv) {
  int vms = 1000, rounds = 5, down_s = 10, max_wait = ccm::vsphere::kStreamMaxWaitSeconds;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--vms")) vms = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--rounds")) rounds = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--down")) down_s = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--max-wait")) max_wait = std::atoi(argv[i + 1]);
  }
  ccm::logging::Init(0);  // warnings and info on stderr; the figures go to stdout
  return ccm::vsphere::Run(vms, std::max(1, rounds), absl::Seconds(down_s), std::max(1, max_wait));
}
