#include "csi/node/node_info.h"

#include <cerrno>
#include <fstream>
#include <map>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "csi/core/constants.h"
#include "csi/core/node_id.h"
#include "csi/node/node_topology_wait.h"
#include "kube/resource.h"

namespace ccm::csi::node {
namespace {

absl::StatusOr<std::string> UuidFromProductSerial(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::ErrnoToStatus(errno, absl::StrCat("read ", path));
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<std::string> uuid = VmUuidFromProductSerial(text.str());
  if (!uuid.ok())
    return absl::Status(uuid.status().code(), absl::StrCat(path, ": ", uuid.status().message()));
  return uuid;
}

// The member at `path` when every step is an object and the last is a string; "" otherwise
// (nlohmann's value() throws on a type mismatch, and a handler must not throw).
std::string StringAt(const kube::Json& j, std::initializer_list<const char*> path) {
  const kube::Json* cur = &j;
  for (const char* key : path) {
    if (!cur->is_object()) return "";
    auto it = cur->find(key);
    if (it == cur->end()) return "";
    cur = &*it;
  }
  return cur->is_string() ? cur->get<std::string>() : "";
}

std::map<std::string, std::string> Labels(const kube::Json& node) {
  std::map<std::string, std::string> out;
  if (!node.is_object() || !node.contains("metadata") || !node["metadata"].is_object()) return out;
  const kube::Json& meta = node["metadata"];
  if (!meta.contains("labels") || !meta["labels"].is_object()) return out;
  for (auto it = meta["labels"].begin(); it != meta["labels"].end(); ++it) {
    if (it.value().is_string()) out[it.key()] = it.value().get<std::string>();
  }
  return out;
}

}  // namespace

absl::StatusOr<NodeInfo> NodeInfoSource::Get() const {
  absl::StatusOr<kube::Json> node = absl::UnavailableError("no Kubernetes API client configured");
  if (options_.node_name.empty()) {
    node = absl::FailedPreconditionError("NODE_NAME is not set");
  } else if (options_.client != nullptr) {
    node = options_.client->Get(kube::Nodes(), "", options_.node_name);
  }
  auto node_error = [&] {
    return absl::StrCat("Node ", options_.node_name, ": ", node.status().message());
  };

  NodeInfo info;
  info.max_volumes_per_node = options_.max_volumes_per_node;
  if (info.max_volumes_per_node <= 0) {
    const bool dense =
        options_.features != nullptr && options_.features->Enabled(kFssHighPvNodeDensity);
    info.max_volumes_per_node =
        dense ? kMaxAllowedBlockVolumesPerNode : kDefaultBlockVolumesPerNode;
  }
  std::string provider_id;
  if (node.ok()) provider_id = StringAt(*node, {"spec", "providerID"});
  if (!provider_id.empty()) {
    absl::StatusOr<std::string> uuid = VmUuidFromProviderId(provider_id);
    if (uuid.ok()) {
      info.node_id = *uuid;
    } else {
      LOG_WARN("Node {}: {}; reading the VM UUID from {}", options_.node_name,
               uuid.status().message(), options_.product_serial_path);
    }
  }
  if (info.node_id.empty()) {
    absl::StatusOr<std::string> uuid = UuidFromProductSerial(options_.product_serial_path);
    if (!uuid.ok()) {
      std::string why = node.ok() ? "it has no spec.providerID yet" : node_error();
      return absl::UnavailableError(
          absl::StrCat("cannot tell this node's VM UUID: not from its Node object (", why,
                       "), not from SMBIOS (", uuid.status().message(), ")"));
    }
    info.node_id = *uuid;
  }

  if (options_.topology_from_crd && options_.client != nullptr) {
    absl::StatusOr<Segments> segments = NodeTopologyFromCrd(*options_.client, options_.node_name,
                                                            info.node_id, options_.topology_wait);
    if (absl::IsNotFound(segments.status())) {
      LOG_WARN("Node {}: {}: registering without topology", options_.node_name,
               segments.status().message());
      return info;
    }
    if (!segments.ok()) return segments.status();
    info.topology = *std::move(segments);
    return info;
  }
  if (ModeOf(options_.topology) == TopologyMode::kNone) return info;
  if (!node.ok()) {
    return absl::UnavailableError(absl::StrCat(
        "topology is configured but the node's topology labels cannot be read: ", node_error()));
  }
  absl::StatusOr<Segments> segments = NodeTopology(Labels(*node), options_.topology);
  if (!segments.ok()) {
    return absl::Status(segments.status().code(), absl::StrCat("Node ", options_.node_name, ": ",
                                                               segments.status().message()));
  }
  info.topology = *std::move(segments);
  return info;
}

}  // namespace ccm::csi::node
