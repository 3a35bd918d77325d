#pragma once
// In-memory Instances for controller tests: per node name, a VM that exists / is shut down /
// has metadata, or an injected error per method; Ready() as set. Thread-safe; counts calls.

#include <map>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "cloud/core/instances.h"

namespace ccm::cloud {

class FakeInstances : public Instances {
 public:
  struct Vm {
    bool shutdown = false;
    InstanceMetadata metadata;
  };

  // Adds or replaces the VM behind the node called `node_name`.
  void SetVm(const std::string& node_name, Vm vm) {
    absl::MutexLock l(&mu_);
    vms_[node_name] = std::move(vm);
  }
  // The VM is confirmed gone: InstanceExists false, the others NotFound.
  void RemoveVm(const std::string& node_name) {
    absl::MutexLock l(&mu_);
    vms_.erase(node_name);
  }
  // Every method fails with `s` for every node until cleared with an OK status (e.g. Unavailable
  // to simulate vCenter being down).
  void SetError(absl::Status s) {
    absl::MutexLock l(&mu_);
    error_ = std::move(s);
  }
  // Fails for one node only (takes precedence over the VM; cleared with an OK status).
  void SetNodeError(const std::string& node_name, absl::Status s) {
    absl::MutexLock l(&mu_);
    if (s.ok()) {
      node_errors_.erase(node_name);
    } else {
      node_errors_[node_name] = std::move(s);
    }
  }
  // Ready() returns `s` until cleared with an OK status (e.g. Unavailable to simulate an inventory
  // that is not synced). Independent of SetError.
  void SetReadyError(absl::Status s) {
    absl::MutexLock l(&mu_);
    ready_error_ = std::move(s);
  }
  // Calls of the per-node methods (Ready() not included).
  int calls() const {
    absl::MutexLock l(&mu_);
    return calls_;
  }
  int ready_calls() const {
    absl::MutexLock l(&mu_);
    return ready_calls_;
  }

  absl::Status Ready() const override {
    absl::MutexLock l(&mu_);
    ++ready_calls_;
    return ready_error_;
  }

  absl::StatusOr<bool> InstanceExists(const NodeIdentity& node) override {
    absl::MutexLock l(&mu_);
    ++calls_;
    if (absl::Status s = ErrorFor(node); !s.ok()) return s;
    return vms_.count(node.name) > 0;
  }
  absl::StatusOr<bool> InstanceShutdown(const NodeIdentity& node) override {
    absl::MutexLock l(&mu_);
    ++calls_;
    if (absl::Status s = ErrorFor(node); !s.ok()) return s;
    auto it = vms_.find(node.name);
    if (it == vms_.end()) return Gone(node);
    return it->second.shutdown;
  }
  absl::StatusOr<InstanceMetadata> GetInstanceMetadata(const NodeIdentity& node) override {
    absl::MutexLock l(&mu_);
    ++calls_;
    if (absl::Status s = ErrorFor(node); !s.ok()) return s;
    auto it = vms_.find(node.name);
    if (it == vms_.end()) return Gone(node);
    return it->second.metadata;
  }

 private:
  absl::Status ErrorFor(const NodeIdentity& node) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (auto it = node_errors_.find(node.name); it != node_errors_.end()) return it->second;
    return error_;
  }
  static absl::Status Gone(const NodeIdentity& node) {
    return absl::NotFoundError(absl::StrCat("no VM found for node ", node.name, " (fake)"));
  }

  mutable absl::Mutex mu_;
  std::map<std::string, Vm> vms_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, absl::Status> node_errors_ ABSL_GUARDED_BY(mu_);
  absl::Status error_ ABSL_GUARDED_BY(mu_);
  absl::Status ready_error_ ABSL_GUARDED_BY(mu_);
  int calls_ ABSL_GUARDED_BY(mu_) = 0;
  mutable int ready_calls_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace ccm::cloud
