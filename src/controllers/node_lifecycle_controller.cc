#include "controllers/node_lifecycle_controller.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "controllers/node_update.h"
#include "controllers/node_writer.h"
#include "kube/errors.h"
#include "kube/objects.h"
#include "kube/resource.h"

namespace ccm::controllers {
namespace {

const kube::Taint& ShutdownTaint() {
  static const kube::Taint* t =
      new kube::Taint{std::string(kShutdownTaintKey), "", std::string(kShutdownTaintEffect)};
  return *t;
}

}  // namespace

NodeLifecycleController::NodeLifecycleController(kube::Client& client, kube::Informer& nodes,
                                                 cloud::Instances& instances,
                                                 kube::EventRecorder* recorder,
                                                 NodeLifecycleControllerOptions options)
    : client_(client),
      nodes_(nodes),
      instances_(instances),
      recorder_(recorder),
      period_(options.monitor_period),
      skip_deletion_(options.skip_node_deletion),
      clock_(options.clock ? *options.clock : Clock::Real()),
      outage_event_interval_(options.outage_event_interval),
      runner_(clock_) {
  metrics::Family* skipped = nullptr;
  if (options.metrics) {
    actions_ = options.metrics->Counter(
        "cloud_node_lifecycle_controller_actions_total",
        "Node lifecycle actions: deleted, delete_skipped, shutdown_tainted, shutdown_untainted, "
        "check_failed, write_failed.",
        {"action"});
    skipped = options.metrics->Counter(
        "cloud_node_lifecycle_controller_skipped_passes_total",
        "Node lifecycle passes that checked no NotReady Node, by reason (vcenter_not_synced).",
        {"reason"});
  }
  gate_ = std::make_unique<ReadyGate>(instances_, "node lifecycle", skipped);
  checked_ = nodes_.AddSelection(NeedsLifecycleCheck);
}

NodeLifecycleController::~NodeLifecycleController() {
  Stop();
  nodes_.RemoveSelection(checked_);
}

void NodeLifecycleController::Start() {
  runner_.Start({
      .name = "node lifecycle controller",
      .informers = {&nodes_},
      // No pass before every vCenter inventory has loaded once: it would only fail for every Node.
      .wait_ready =
          [this](const absl::Notification& stop) {
            return gate_->WaitUntilReady(stop, absl::Milliseconds(100));
          },
      .period = period_,
      .pass_at_start = true,
      .pass = [this] { MonitorNodes(); },
  });
}

void NodeLifecycleController::Stop() { runner_.Stop(); }

void NodeLifecycleController::MonitorNodes() {
  if (ReadyGate::Result gate = gate_->Check(); !gate.ready.ok()) {
    SkipPass(gate);
  } else {
    // Only the Nodes the pass acts on (a Ready Node without the shutdown taint needs nothing),
    // one decoded at a time.
    for (const std::string& key : nodes_.Selected(checked_)) {
      if (runner_.stopping().HasBeenNotified()) break;
      kube::ObjectPtr node = nodes_.Get(key);
      if (node && IsOurs(*node)) MonitorNode(*node);
    }
  }
  absl::MutexLock l(&mu_);
  ++passes_;
}

void NodeLifecycleController::SkipPass(const ReadyGate::Result& gate) {
  if (gate.outage_began) outage_event_due_ = true;
  // Ready Nodes need no provider answer; NotReady ones wait (one decoded Node kept at a time).
  kube::ObjectPtr first;  // the first (by name) NotReady Node left unchecked
  int unchecked = 0;
  for (const std::string& key : nodes_.Selected(checked_)) {
    if (runner_.stopping().HasBeenNotified()) return;
    kube::ObjectPtr node = nodes_.Get(key);
    if (!node || !IsOurs(*node)) continue;
    if (kube::IsNodeReady(*node)) {
      MonitorReadyNode(*node);
      continue;
    }
    if (!HasOurProviderId(*node)) continue;  // never checked, so not waiting either
    ++unchecked;
    if (!first || kube::Name(*node) < kube::Name(*first)) first = std::move(node);
  }
  if (!outage_event_due_ || !first) return;
  outage_event_due_ = false;
  const absl::Time now = clock_.Now();
  if (now - last_outage_event_ < outage_event_interval_) return;  // rate limit across outages
  last_outage_event_ = now;
  Warn(*first, "NodeCheckFailed",
       absl::StrCat("vCenter inventory not synced: this NotReady node",
                    unchecked > 1 ? absl::StrCat(" and ", unchecked - 1, " other(s) are") : " is",
                    " not checked and nothing is deleted or tainted until every vCenter is "
                    "synced again (one Event per outage): ",
                    gate.ready.message()));
}

void NodeLifecycleController::MonitorReadyNode(const kube::Json& node) {
  if (!kube::HasTaint(node, kShutdownTaintKey, ShutdownTaint().effect)) return;
  const std::string name = kube::Name(node);
  absl::StatusOr<NodeWriteResult> s = UpdateNodeWithRetry(client_, node, [](kube::Json& n) {
    return kube::RemoveTaint(n, kShutdownTaintKey, ShutdownTaint().effect);
  });
  if (!s.ok()) {
    LOG_WARN("node lifecycle: remove shutdown taint from node {}: {}", name, s.status());
    return Count("write_failed");
  }
  // Not written: the informer's copy was behind and the fresh Node has no taint (already done).
  if (!s->written) return;
  LOG_INFO("node lifecycle: node {} is Ready again, removed the shutdown taint", name);
  Count("shutdown_untainted");
}

void NodeLifecycleController::MonitorNode(const kube::Json& node) {
  if (kube::IsNodeReady(node)) return MonitorReadyNode(node);
  const std::string name = kube::Name(node);
  if (!HasOurProviderId(node)) {
    // No providerID: never initialised by us (bare metal, another provider's, or waiting for
    // initialisation). Deleting it on a name, systemUUID or IP look-up could remove a live node.
    VLOG(3, "node lifecycle: NotReady node {} has no vsphere:// providerID; not checked", name);
    return;
  }

  const cloud::NodeIdentity id = NodeIdentityOf(node);
  absl::StatusOr<bool> exists = instances_.InstanceExists(id);
  absl::StatusOr<bool> shutdown = false;
  if (exists.ok() && *exists) shutdown = instances_.InstanceShutdown(id);
  // NotFound from InstanceShutdown: the VM vanished between the two calls; the next period sees
  // InstanceExists false and acts on it. Every other error here means "delete nothing now".
  if (absl::IsNotFound(shutdown.status())) return;
  absl::Status err = !exists.ok() ? exists.status() : shutdown.status();
  if (!err.ok()) {
    LOG_WARN("node lifecycle: cannot check the VM of NotReady node {}: {}", name, err);
    Warn(node, "NodeCheckFailed",
         absl::StrCat("could not ask vCenter about the VM of this NotReady node; nothing is "
                      "deleted, retrying every ",
                      absl::FormatDuration(period_), ": ", err.message()));
    return Count("check_failed");
  }

  if (!*exists) {
    if (skip_deletion_) {
      VLOG(2, "node lifecycle: VM of node {} is gone; SKIP_NODE_DELETION is set", name);
      return Count("delete_skipped");
    }
    LOG_INFO("node lifecycle: deleting node {}: its VM no longer exists in vCenter", name);
    if (recorder_) {
      recorder_->Normal(
          NodeRef(node), "DeletingNode",
          absl::StrCat("Deleting node ", name, " because it does not exist in the cloud provider"));
    }
    kube::DeleteOptions opts;
    opts.precondition_uid = kube::Uid(node);
    absl::Status s = client_.Delete(kube::Nodes(), "", name, opts);
    if (kube::IsNotFoundError(s)) return;  // deleted already (the informer's copy was behind)
    if (!s.ok()) {
      // A Conflict means the Node was re-created under the same name: not ours to delete.
      LOG_WARN("node lifecycle: delete node {} (uid {}): {}", name, opts.precondition_uid, s);
      return Count("write_failed");
    }
    return Count("deleted");
  }

  if (*shutdown && !kube::HasTaint(node, kShutdownTaintKey, ShutdownTaint().effect)) {
    absl::StatusOr<NodeWriteResult> s = UpdateNodeWithRetry(
        client_, node, [](kube::Json& n) { return kube::AddTaint(n, ShutdownTaint()); });
    if (!s.ok()) {
      LOG_WARN("node lifecycle: add shutdown taint to node {}: {}", name, s.status());
      return Count("write_failed");
    }
    if (!s->written) return;  // the fresh Node had the taint already
    LOG_INFO("node lifecycle: VM of node {} is not powered on, added the shutdown taint", name);
    Count("shutdown_tainted");
  }
}

int64_t NodeLifecycleController::passes() const {
  absl::MutexLock l(&mu_);
  return passes_;
}

bool NodeLifecycleController::WaitForPasses(int64_t n, absl::Duration timeout) const {
  absl::MutexLock l(&mu_);
  auto reached = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return passes_ >= n; };
  return mu_.AwaitWithTimeout(absl::Condition(&reached), timeout);
}

void NodeLifecycleController::Warn(const kube::Json& node, absl::string_view reason,
                                   absl::string_view message) {
  if (recorder_) recorder_->Warning(NodeRef(node), reason, message);
}

void NodeLifecycleController::Count(absl::string_view action) {
  if (actions_) actions_->Add({std::string(action)});
}

}  // namespace ccm::controllers
