#pragma once
// An object read from its JSON without its top-level "status": a writer whose next write needs
// the stored metadata and spec (a Node's labels, providerID and taints) but not its status,
// which on a real Node is most of the answer (conditions, capacity, nodeInfo, and the images
// list, often tens of kilobytes). The API server writes status last (kind, apiVersion, metadata,
// spec, status), so the parse stops there once metadata and spec are read; a status written
// earlier is skipped without being built.

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace ccm::kube {

// The object without "status". Errors (InvalidArgument, naming `what`): malformed JSON before
// the parse could stop, not an object.
absl::StatusOr<nlohmann::json> ParseWithoutStatus(absl::string_view body, absl::string_view what);

}  // namespace ccm::kube
