#pragma once
// Where recorded events go: core/v1 Events created or patched on the API server
// (kube/kube_event_sink.h) or kept in memory for tests.

#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace ccm::kube {

// The object an event is about (core/v1 ObjectReference).
struct ObjectReference {
  std::string kind;  // "Node"
  std::string ns;    // "" for cluster-scoped objects
  std::string name;
  std::string uid;
  std::string api_version;  // "v1"
  std::string resource_version;
  std::string field_path;
};

// A core/v1 Event.
struct Event {
  std::string ns;    // metadata.namespace: the object's, or "default" for cluster-scoped ones
  std::string name;  // metadata.name: "<object name>.<hex unix nanos>"
  std::string resource_version;
  ObjectReference involved_object;
  std::string reason;   // UpperCamelCase, machine-readable
  std::string message;  // human-readable; never a credential
  std::string type;     // "Normal" or "Warning"
  std::string source_component;
  std::string source_host;
  int count = 1;
  absl::Time first_timestamp = absl::UnixEpoch();
  absl::Time last_timestamp = absl::UnixEpoch();
  std::string reporting_controller;  // JSON reportingComponent
  std::string reporting_instance;
};

class EventSink {
 public:
  virtual ~EventSink() = default;
  // Creates the event; returns it as stored (with its resourceVersion).
  // AlreadyExists when the name is taken.
  virtual absl::StatusOr<Event> Create(const Event& event) = 0;
  // Updates count, lastTimestamp and message of the stored event event.ns/event.name
  // (a merge patch). NotFound when it is gone (events expire after an hour by default).
  virtual absl::StatusOr<Event> Patch(const Event& event) = 0;
};

// Events in memory, with fault injection for tests. Thread-safe.
class MemoryEventSink final : public EventSink {
 public:
  absl::StatusOr<Event> Create(const Event& event) override;
  absl::StatusOr<Event> Patch(const Event& event) override;

  // The next `n` calls fail with `s`.
  void FailNext(int n, absl::Status s);
  // Stored events in creation order.
  std::vector<Event> Events() const;
  // "create <name>" / "patch <name>" per successful call, in order.
  std::vector<std::string> Calls() const;
  void Delete(const std::string& ns, const std::string& name);
  // Calls made, including failed ones.
  int attempts() const;

 private:
  absl::Status MaybeFail() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  std::vector<Event> events_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> calls_ ABSL_GUARDED_BY(mu_);
  int fail_next_ ABSL_GUARDED_BY(mu_) = 0;
  int attempts_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status fail_status_ ABSL_GUARDED_BY(mu_);
  int64_t version_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace ccm::kube
