#pragma once
// EventSink on the Kubernetes API: POST /api/v1/namespaces/<ns>/events and a strategic-merge
// PATCH of count, lastTimestamp and message for repeats (what client-go's EventSinkImpl does).

#include "kube/client.h"
#include "kube/event_sink.h"

namespace ccm::kube {

class KubeEventSink final : public EventSink {
 public:
  explicit KubeEventSink(Client& client) : client_(client) {}
  absl::StatusOr<Event> Create(const Event& event) override;
  absl::StatusOr<Event> Patch(const Event& event) override;

 private:
  Client& client_;
};

// Conversions (exposed for tests). firstTimestamp/lastTimestamp are metav1.Time (seconds).
Json EventToJson(const Event& event);
absl::StatusOr<Event> EventFromJson(const Json& json);
Json EventPatchJson(const Event& event);

}  // namespace ccm::kube
