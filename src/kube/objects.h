#pragma once
// Typed read/write helpers over the JSON objects of the API. The objects stay nlohmann::json so
// that fields we do not model survive a read-modify-write; these helpers only read or set the
// fields they name. Pure functions, no I/O.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kube/object_scan.h"
#include "nlohmann/json.hpp"

namespace ccm::kube {

using Json = nlohmann::json;

// --- metadata (any object)
std::string Name(const Json& obj);
std::string Namespace(const Json& obj);
std::string Uid(const Json& obj);
std::string ResourceVersion(const Json& obj);
// Store/work-queue key: "namespace/name", or "name" for cluster-scoped objects.
std::string ObjectKey(const Json& obj);
std::map<std::string, std::string> Labels(const Json& obj);
std::map<std::string, std::string> Annotations(const Json& obj);
std::optional<std::string> Label(const Json& obj, absl::string_view key);
std::optional<std::string> Annotation(const Json& obj, absl::string_view key);
void SetLabel(Json& obj, absl::string_view key, absl::string_view value);
void SetAnnotation(Json& obj, absl::string_view key, absl::string_view value);

// --- Node
struct Taint {
  std::string key;
  std::string value;
  std::string effect;  // NoSchedule, PreferNoSchedule, NoExecute
  bool operator==(const Taint&) const = default;
};
struct NodeAddress {
  std::string type;  // Hostname, InternalIP, ExternalIP, InternalDNS, ExternalDNS
  std::string address;
  bool operator==(const NodeAddress&) const = default;
};

std::vector<Taint> Taints(const Json& node);
bool HasTaint(const Json& node, absl::string_view key, absl::string_view effect = "");
// Adds the taint unless one with the same key and effect exists. Returns true if changed.
bool AddTaint(Json& node, const Taint& t);
// Removes taints with this key (and effect, if given). Returns true if changed.
bool RemoveTaint(Json& node, absl::string_view key, absl::string_view effect = "");
std::string ProviderId(const Json& node);
void SetProviderId(Json& node, absl::string_view provider_id);
std::vector<NodeAddress> NodeAddresses(const Json& node);
void SetNodeAddresses(Json& node, const std::vector<NodeAddress>& addresses);
// Status ("True"/"False"/"Unknown") of a condition, nullopt when absent.
std::optional<std::string> NodeConditionStatus(const Json& node, absl::string_view type);
bool IsNodeReady(const Json& node);        // condition Ready == "True"
std::string SystemUuid(const Json& node);  // status.nodeInfo.systemUUID
// Drops what no reader above needs from a Node kept in a cache: metadata.managedFields and all
// of status except addresses, the type and status of each condition, and nodeInfo.systemUUID
// (images alone are often most of a real Node; a condition's reason, message and times are most
// of the rest). Safe for objects later sent back with PUT on the main resource: the API
// server keeps status there, and keeps the live managedFields when a request has none.
void TrimNodeForCache(Json& node);
// What TrimNodeForCache keeps, as a parse rule (object_scan.h): an informer skips the rest while
// it reads each watch event, and stops after the status's nodeInfo.
const KeepRule& NodeCacheRule();

// --- Secret
// data (base64-decoded) overlaid with stringData, as the API server merges them on write.
// Invalid base64 is an error naming the key.
absl::StatusOr<std::map<std::string, std::string>> SecretData(const Json& secret);

// --- Lease (coordination.k8s.io/v1 spec); times are RFC 3339 with microseconds (MicroTime).
struct LeaseSpec {
  std::string holder_identity;
  int64_t lease_duration_seconds = 0;
  std::string acquire_time;  // "" when unset
  std::string renew_time;
  int64_t lease_transitions = 0;
};
LeaseSpec GetLeaseSpec(const Json& lease);
void SetLeaseSpec(Json& lease, const LeaseSpec& spec);

// --- core/v1 Event
struct EventInfo {
  std::string type;  // Normal, Warning
  std::string reason;
  std::string message;
  int32_t count = 0;
  std::string involved_kind, involved_name, involved_namespace, involved_uid;
};
EventInfo GetEventInfo(const Json& event);

// --- base64 (standard alphabet, padded), as Kubernetes uses for Secret data.
std::string Base64Encode(absl::string_view in);
std::optional<std::string> Base64Decode(absl::string_view in);

}  // namespace ccm::kube
