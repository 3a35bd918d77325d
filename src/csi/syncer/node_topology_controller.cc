#include "csi/syncer/node_topology_controller.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "csi/crd/csinodetopology.h"
#include "kube/errors.h"
#include "kube/objects.h"

namespace ccm::csi::syncer {

NodeTopologyController::NodeTopologyController(kube::Client& client,
                                               const NodeVmTopologySource& source,
                                               NodeTopologyControllerOptions options)
    : client_(client),
      source_(source),
      options_(std::move(options)),
      informer_(client, CsiNodeTopologies(), kube::InformerOptions{}) {
  kube::ResourceEventHandler h;
  h.on_add = [this](const kube::Json& obj) { Mark(kube::Name(obj)); };
  h.on_update = [this](const kube::Json&, const kube::Json& obj) { Mark(kube::Name(obj)); };
  informer_.AddEventHandler(std::move(h));
}

NodeTopologyController::~NodeTopologyController() { Stop(); }

void NodeTopologyController::Start() {
  informer_.Start();
  worker_ = std::thread([this] { Work(); });
}

void NodeTopologyController::Stop() {
  {
    absl::MutexLock l(&mu_);
    stopping_ = true;
  }
  if (worker_.joinable()) worker_.join();
  informer_.Stop();
}

NodeTopologyStats NodeTopologyController::stats() const {
  absl::MutexLock l(&mu_);
  return stats_;
}

void NodeTopologyController::Mark(const std::string& name) {
  absl::MutexLock l(&mu_);
  dirty_.insert(name);
}

void NodeTopologyController::Work() {
  uint64_t seen = source_.generation();
  while (true) {
    std::set<std::string> batch;
    {
      absl::MutexLock l(&mu_);
      auto ready = [this]()
                       ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !dirty_.empty() || stopping_; };
      mu_.AwaitWithTimeout(absl::Condition(&ready), options_.recheck);
      if (stopping_) return;
      batch.swap(dirty_);
      batch.insert(waiting_.begin(), waiting_.end());
      waiting_.clear();
    }
    const uint64_t now = source_.generation();
    if (now != seen) {  // every answer may have changed: compare them all (in memory)
      seen = now;
      for (const std::string& key : informer_.Keys()) batch.insert(key);
    }
    for (const std::string& name : batch) Reconcile(name);
  }
}

void NodeTopologyController::Reconcile(const std::string& name) {
  kube::ObjectPtr obj = informer_.Get(name);
  if (obj == nullptr) return;  // deleted (with its Node, by the garbage collector)
  const CsiNodeTopology current = ParseCsiNodeTopology(*obj);
  const NodeVmTopology vm = current.node_uuid.empty() ? NodeVmTopology{absl::OkStatus(), "", {}}
                                                      : source_.Lookup(current.node_uuid);
  std::optional<NodeTopologyStatus> want =
      DesiredNodeTopology(name, current.node_uuid, options_.topology, vm);
  if (!want) {
    if (absl::IsUnavailable(vm.state)) {
      VLOG(1, "CSINodeTopology {}: waiting: {}", name, vm.state.message());
      absl::MutexLock l(&mu_);
      waiting_.insert(name);
    }
    return;  // spec.nodeuuid empty: the node plugin sets it (an update event follows)
  }
  if (*want == current.status) return;
  absl::StatusOr<kube::Json> written = client_.Update(CsiNodeTopologies(), WithStatus(*obj, *want));
  if (!written.ok()) {
    absl::MutexLock l(&mu_);
    if (kube::IsConflict(written.status())) {
      ++stats_.conflicts;  // the newer version's event brings it back
    } else {
      LOG_WARN("CSINodeTopology {}: update: {}", name, written.status().message());
      waiting_.insert(name);
    }
    return;
  }
  {
    absl::MutexLock l(&mu_);
    ++stats_.writes;
  }
  const bool ok = want->status == kNodeTopologySuccess;
  std::string message = ok ? absl::StrCat("Topology labels successfully updated for nodeVM ", name,
                                          want->labels.empty() ? " (no topology configured)" : "")
                           : want->error_message;
  if (ok) {
    Segments segments(want->labels.begin(), want->labels.end());
    LOG_INFO("CSINodeTopology {}: {} {}", name, kNodeTopologySuccess, FormatSegments(segments));
  } else {
    LOG_WARN("CSINodeTopology {}: {}", name, message);
  }
  if (options_.events == nullptr) return;
  kube::ObjectReference ref{"CSINodeTopology", "", name, kube::Uid(*written),
                            CsiNodeTopologies().api_version()};
  if (ok) {
    options_.events->Normal(ref, "TopologyRetrievalSucceeded", message);
  } else {
    options_.events->Warning(ref, "TopologyRetrievalFailed", message);
  }
}

}  // namespace ccm::csi::syncer
