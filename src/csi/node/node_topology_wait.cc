#include "csi/node/node_topology_wait.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/logging.h"
#include "csi/core/node_topology.h"
#include "csi/crd/csinodetopology.h"
#include "kube/errors.h"
#include "kube/objects.h"
#include "kube/resource.h"

namespace ccm::csi::node {
namespace {

constexpr int kAttempts = 5;

std::string Prefix(const std::string& node) { return absl::StrCat("CSINodeTopology ", node); }

// Creates the object, or resets an existing one; returns the resourceVersion written.
absl::StatusOr<std::string> Announce(kube::Client& client, const std::string& node,
                                     const std::string& uuid) {
  absl::Status last;
  for (int i = 0; i < kAttempts; ++i) {
    absl::StatusOr<kube::Json> got = client.Get(CsiNodeTopologies(), "", node);
    if (got.ok()) {
      kube::Json patch = {{"metadata", {{"resourceVersion", kube::ResourceVersion(*got)}}},
                          {"spec", {{"nodeID", node}, {"nodeuuid", uuid}}},
                          {"status", {{"status", ""}}}};
      absl::StatusOr<kube::Json> patched =
          client.Patch(CsiNodeTopologies(), "", node, kube::PatchType::kMerge, patch);
      if (patched.ok()) return kube::ResourceVersion(*patched);
      last = patched.status();
      if (kube::IsConflict(last)) continue;
      return absl::UnavailableError(absl::StrCat(Prefix(node), ": reset: ", last.message()));
    }
    if (!kube::IsNotFoundError(got.status())) {
      return absl::UnavailableError(absl::StrCat(Prefix(node), ": ", got.status().message()));
    }
    absl::StatusOr<kube::Json> n = client.Get(kube::Nodes(), "", node);
    if (!n.ok()) {
      return absl::UnavailableError(absl::StrCat("Node ", node, ": ", n.status().message()));
    }
    absl::StatusOr<kube::Json> made =
        client.Create(CsiNodeTopologies(), "", NewCsiNodeTopology(node, kube::Uid(*n), uuid));
    if (made.ok()) {
      LOG_INFO("{}: created for VM {}", Prefix(node), uuid);
      return kube::ResourceVersion(*made);
    }
    last = made.status();
    if (kube::IsAlreadyExistsError(last)) continue;
    if (kube::IsNotFoundError(last)) {
      return absl::NotFoundError(absl::StrCat("the CRD ", kCsiNodeTopologyCrd,
                                              " is not installed (", last.message(), ")"));
    }
    return absl::UnavailableError(absl::StrCat(Prefix(node), ": create: ", last.message()));
  }
  return absl::UnavailableError(
      absl::StrCat(Prefix(node), ": changed under us ", kAttempts, " times: ", last.message()));
}

}  // namespace

absl::StatusOr<Segments> NodeTopologyFromCrd(kube::Client& client, const std::string& node,
                                             const std::string& node_uuid, absl::Duration timeout) {
  absl::StatusOr<std::string> version = Announce(client, node, node_uuid);
  if (!version.ok()) return version.status();
  const absl::Time deadline = absl::Now() + timeout;
  std::optional<absl::StatusOr<Segments>> answer;
  absl::Status last;
  std::string from = *version;
  while (!answer && absl::Now() < deadline) {
    kube::WatchOptions wo;
    wo.field_selector = absl::StrCat("metadata.name=", node);
    wo.resource_version = from;
    wo.allow_bookmarks = false;
    wo.timeout_seconds = std::max<int64_t>(1, absl::ToInt64Seconds(deadline - absl::Now()));
    last = client.Watch(
        CsiNodeTopologies(), "", wo,
        [&](kube::WatchEvent& e) {
          if (e.type != kube::WatchEventType::kAdded && e.type != kube::WatchEventType::kModified)
            return true;
          from = kube::ResourceVersion(e.object);
          answer = NodeTopologyAnswer(node, ParseCsiNodeTopology(e.object).status);
          return !answer.has_value();
        },
        nullptr);
    if (answer || absl::Now() >= deadline) break;
    // The watch ended early (an error, 410, a server-side end): read the object and go on.
    absl::StatusOr<kube::Json> got = client.Get(CsiNodeTopologies(), "", node);
    if (!got.ok()) {
      last = got.status();
      if (kube::IsNotFoundError(last)) break;  // deleted meanwhile: the registrar retries
      absl::SleepFor(std::min(absl::Seconds(1), deadline - absl::Now()));
      continue;
    }
    from = kube::ResourceVersion(*got);
    answer = NodeTopologyAnswer(node, ParseCsiNodeTopology(*got).status);
  }
  if (answer) return *std::move(answer);
  return absl::UnavailableError(absl::StrCat(
      Prefix(node), ": the syncer (vsphere-syncer) did not answer within ",
      absl::FormatDuration(timeout), last.ok() ? "" : absl::StrCat(" (", last.message(), ")"),
      "; is it running and leading?"));
}

}  // namespace ccm::csi::node
