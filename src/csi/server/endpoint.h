#pragma once
// The CSI endpoint: where the gRPC server listens. Kubernetes passes it as CSI_ENDPOINT, e.g.
// `unix:///csi/csi.sock`; the sidecars in the same pod dial the same socket file.
//
// Accepted: `unix:///abs/path`, `unix:/abs/path`, `unix://rel/path` and a plain path. Refused:
// `tcp://...` and any other scheme, as the reference driver refuses them ("endpoint must be a
// unix socket"): an unauthenticated storage API on a network port would let anyone who can
// reach the node create, attach and delete disks.

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ccm::csi {

struct Endpoint {
  std::string socket_path;   // the socket file, as given (relative paths stay relative)
  std::string grpc_address;  // the form gRPC's AddListeningPort takes: "unix:<path>"
};

absl::StatusOr<Endpoint> ParseEndpoint(absl::string_view endpoint);

// Removes a socket file left behind by a previous run (the reference does the same at start).
// A path that is not a socket (a regular file, a directory) is never removed: that is an error,
// as is a socket another live process still accepts connections on. A missing file is fine.
absl::Status RemoveStaleSocket(const std::string& path);

}  // namespace ccm::csi
