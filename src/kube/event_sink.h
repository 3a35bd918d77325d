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

}  // namespace ccm::kube
