#include "controllers/node_controller.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "controllers/node_update.h"
#include "controllers/node_writer.h"
#include "kube/errors.h"
#include "kube/objects.h"
#include "kube/resource.h"

namespace ccm::controllers {
namespace {

kube::WorkQueueOptions QueueOptions(NodeControllerOptions& o, Clock& clock) {
  kube::WorkQueueOptions q;
  q.name = "node";
  q.clock = &clock;
  q.limiter = std::move(o.rate_limiter);
  q.metrics = o.queue_metrics;
  return q;
}

bool Initialised(const kube::Json& node) {
  return !kube::ProviderId(node).empty() && IsOurs(node) &&
         !kube::HasTaint(node, kUninitializedTaintKey);
}

// An initialised Node whose GA labels lag their beta ones (ReconcileNodeLabels).
bool LabelsNeedReconcile(const kube::Json& node) {
  return Initialised(node) && !ReconcileNodeLabels(kube::Labels(node)).empty();
}

}  // namespace

NodeController::NodeController(kube::Client& client, kube::Informer& nodes,
                               cloud::Instances& instances, kube::EventRecorder* recorder,
                               NodeControllerOptions options)
    : client_(client),
      nodes_(nodes),
      instances_(instances),
      recorder_(recorder),
      workers_(std::max(1, options.workers)),
      refresh_every_(options.status_update_frequency),
      extra_labels_(options.extra_labels),
      update_attempts_(std::max(1, options.update_attempts)),
      clock_(options.clock ? *options.clock : Clock::Real()),
      queue_(QueueOptions(options, clock_)),
      runner_(clock_) {
  metrics::Family* skipped = nullptr;
  if (metrics::Registry* r = options.metrics) {
    init_latency_ =
        r->Histogram("cloud_node_controller_initialization_duration_seconds",
                     "Time from first seeing an uninitialised Node to its initialisation.", {},
                     metrics::LatencyBuckets());
    syncs_ = r->Counter("cloud_node_controller_syncs_total",
                        "Node syncs by kind (initialize, refresh) and result (success, failure).",
                        {"kind", "result"});
    address_updates_ = r->Counter("cloud_node_controller_address_updates_total",
                                  "PATCHes of status.addresses by the address refresh.");
    skipped = r->Counter(
        "cloud_node_controller_skipped_refresh_passes_total",
        "Address refresh passes that queued no Node, by reason (vcenter_not_synced).", {"reason"});
  }
  refresh_gate_ = std::make_unique<ReadyGate>(instances_, "node address refresh", skipped);
  handler_id_ = nodes_.AddEventHandler({
      .on_add =
          [this](const kube::Json& n) {
            EnqueueIfUninitialized(n);
            if (LabelsNeedReconcile(n)) queue_.Add(kube::Name(n));
          },
      // Only when the taint appears: a tainted Node is already queued, or being retried with
      // backoff, and re-queueing it for its own status PATCH would cost a PUT (409) and a GET.
      .on_update =
          [this](const kube::Json& old_node, const kube::Json& n) {
            if (kube::HasTaint(old_node, kUninitializedTaintKey)) return;
            EnqueueIfUninitialized(n);
            // As cloud-provider syncs every update; queued only when there is something to fix.
            if (LabelsNeedReconcile(n)) queue_.Add(kube::Name(n));
          },
      .on_delete =
          [this](const kube::Json& n) {
            absl::MutexLock l(&mu_);
            first_seen_.erase(kube::Name(n));
          },
  });
}

NodeController::~NodeController() {
  nodes_.RemoveEventHandler(handler_id_);
  Stop();
}

void NodeController::Start() {
  runner_.Start({
      .name = "node controller",
      .informers = {&nodes_},
      .workers = workers_,
      .process_next_item = [this] { return ProcessNextItem(); },
      .shut_down_queue = [this] { queue_.ShutDown(); },
      .period = refresh_every_,
      .pass = [this] { RefreshPass(); },
  });
}

void NodeController::Stop() {
  runner_.Stop();
  queue_.ShutDown();  // also when never started: ProcessNextItem then returns false
}

void NodeController::RefreshPass() {
  // Not Ready: every refresh would fail with Unavailable and be retried per Node; skip instead.
  if (refresh_gate_->Check().ready.ok()) {
    for (const std::string& key : nodes_.Keys()) {  // one decoded Node at a time
      kube::ObjectPtr n = nodes_.Get(key);
      if (n && Initialised(*n)) queue_.Add(kube::Name(*n));
    }
  }
  absl::MutexLock l(&mu_);
  ++refresh_passes_;
}

int64_t NodeController::refresh_passes() const {
  absl::MutexLock l(&mu_);
  return refresh_passes_;
}

bool NodeController::WaitForRefreshPasses(int64_t n, absl::Duration timeout) const {
  absl::MutexLock l(&mu_);
  auto reached = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return refresh_passes_ >= n; };
  return mu_.AwaitWithTimeout(absl::Condition(&reached), timeout);
}

void NodeController::EnqueueIfUninitialized(const kube::Json& node) {
  if (!kube::HasTaint(node, kUninitializedTaintKey) || !IsOurs(node)) return;
  std::string name = kube::Name(node);
  {
    absl::MutexLock l(&mu_);
    first_seen_.try_emplace(name, clock_.Now());
  }
  queue_.Add(name);
}

void NodeController::EnqueueAddressRefresh(const std::string& node_name) { queue_.Add(node_name); }

bool NodeController::ProcessNextItem() {
  std::optional<std::string> name = queue_.Get();
  if (!name) return false;
  absl::Status s = Sync(*name);
  if (s.ok()) {
    queue_.Forget(*name);
  } else {
    LOG_WARN("node controller: sync node {} failed (retry {}): {}", *name,
             queue_.NumRequeues(*name) + 1, s);
    queue_.AddRateLimited(*name);
  }
  queue_.Done(*name);
  return true;
}

absl::Status NodeController::Sync(const std::string& name) {
  kube::ObjectPtr node = nodes_.Get(name);
  if (!node || !IsOurs(*node)) return absl::OkStatus();  // deleted, or another provider's
  if (kube::HasTaint(*node, kUninitializedTaintKey)) {
    absl::Status s = Initialize(*node);
    CountSync("initialize", s.ok());
    if (!s.ok()) Warn(*node, "InitializationFailed", s.message());
    return s;
  }
  if (!Initialised(*node)) return absl::OkStatus();
  // Needs no provider answer, so before the Ready gate.
  if (absl::Status s = ReconcileLabels(*node); !s.ok()) return s;
  if (absl::Status ready = instances_.Ready(); !ready.ok()) {
    // Dropped, not retried: the first refresh pass after the resync queues it again.
    VLOG(2, "node controller: address refresh of node {} dropped: {}", name, ready);
    return absl::OkStatus();
  }
  absl::Status s = RefreshAddresses(*node);
  CountSync("refresh", s.ok());
  return s;
}

absl::Status NodeController::Initialize(const kube::Json& node) {
  const std::string name = kube::Name(node);
  absl::StatusOr<cloud::InstanceMetadata> md = instances_.GetInstanceMetadata(NodeIdentityOf(node));
  if (!md.ok()) {
    return Annotate(md.status(), absl::StrCat("initialize node ", name));
  }
  // The informer's Node is shared and read-only: copied only when no address PATCH returns a
  // fresh one to start from (which is moved, not copied, into the update). The PATCH's answer's
  // metadata and spec are read on purpose: the update's patch adds labels without a test (RFC
  // 6902 cannot test for absence), so it must start from the Node as stored, not from a cache
  // that may not have seen another writer's label yet
  // (NodeControllerTest.ExtraLabelsNeverOverwrite). Its status, most of a real Node's answer
  // (conditions, capacity, nodeInfo, images), is not built: the update neither reads nor writes it.
  std::optional<kube::Json> base;
  if (auto addresses = AddressUpdate(node, *md)) {
    absl::StatusOr<kube::Json> patched = client_.PatchWithoutStatus(
        kube::Nodes(), "", name, kAddressesPatchType, AddressesPatch(*addresses), "status");
    if (!patched.ok()) {
      return Annotate(patched.status(), absl::StrCat("initialize node ", name, ": set addresses ",
                                                     cloud::DebugString(md->node_addresses)));
    }
    base = *std::move(patched);  // carries the new resourceVersion
  }
  if (!base) base = node;  // the Node already had these addresses
  absl::StatusOr<NodeWriteResult> stored = UpdateNodeWithRetry(
      client_, *std::move(base),
      [&](kube::Json& n) { return ApplyNodeUpdate(n, *md, extra_labels_); }, update_attempts_);
  if (!stored.ok()) {
    return Annotate(stored.status(), absl::StrCat("initialize node ", name));
  }
  // Not written: a re-sync from a stale store found the Node already initialised.
  if (!stored->written) return absl::OkStatus();
  absl::Time first;
  {
    absl::MutexLock l(&mu_);
    auto it = first_seen_.find(name);
    first = it != first_seen_.end() ? it->second : clock_.Now();
    first_seen_.erase(name);
  }
  if (init_latency_) init_latency_->Observe({}, absl::ToDoubleSeconds(clock_.Now() - first));
  LOG_INFO("node controller: initialised node {} (providerID {}, {})", name,
           kube::ProviderId(stored->node), cloud::DebugString(md->node_addresses));
  if (recorder_) recorder_->Normal(NodeRef(stored->node), "Synced", "Node synced successfully");
  return absl::OkStatus();
}

absl::Status NodeController::ReconcileLabels(const kube::Json& node) {
  if (ReconcileNodeLabels(kube::Labels(node)).empty()) return absl::OkStatus();
  const std::string name = kube::Name(node);
  std::map<std::string, std::string> set;
  absl::StatusOr<NodeWriteResult> stored = UpdateNodeWithRetry(
      client_, node,
      [&](kube::Json& n) {
        set = ReconcileNodeLabels(kube::Labels(n));  // on the freshest copy after a 409
        for (const auto& [k, v] : set) kube::SetLabel(n, k, v);
        return !set.empty();
      },
      update_attempts_);
  if (!stored.ok())
    return Annotate(stored.status(), absl::StrCat("reconcile labels of node ", name));
  if (stored->written) {
    LOG_INFO("node controller: node {}: GA labels reconciled from their beta labels: {}", name,
             absl::StrJoin(set, ", ", absl::PairFormatter("=")));
  }
  return absl::OkStatus();
}

absl::Status NodeController::RefreshAddresses(const kube::Json& node) {
  const std::string name = kube::Name(node);
  absl::StatusOr<cloud::InstanceMetadata> md = instances_.GetInstanceMetadata(NodeIdentityOf(node));
  if (!md.ok()) {
    return Annotate(md.status(), absl::StrCat("refresh addresses of node ", name));
  }
  std::optional<std::vector<kube::NodeAddress>> addresses = AddressUpdate(node, *md);
  if (!addresses) return absl::OkStatus();
  absl::StatusOr<kube::Json> patched = client_.Patch(kube::Nodes(), "", name, kAddressesPatchType,
                                                     AddressesPatch(*addresses), "status");
  if (!patched.ok()) {
    return Annotate(patched.status(), absl::StrCat("refresh addresses of node ", name));
  }
  if (address_updates_) address_updates_->Add({});
  LOG_INFO("node controller: node {} addresses now {}", name,
           cloud::DebugString(md->node_addresses));
  return absl::OkStatus();
}

void NodeController::Warn(const kube::Json& node, absl::string_view reason,
                          absl::string_view message) {
  if (recorder_) recorder_->Warning(NodeRef(node), reason, message);
}

void NodeController::CountSync(absl::string_view kind, bool ok) {
  if (syncs_) syncs_->Add({std::string(kind), ok ? "success" : "failure"});
}

}  // namespace ccm::controllers
