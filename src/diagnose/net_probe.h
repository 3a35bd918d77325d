#pragma once
// The network steps of diagnose's vCenter checks, below HTTP: name resolution, a TCP connection,
// and the certificate a TLS server presents (read without verifying it, to show its thumbprint
// when verification fails).

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace ccm::diagnose {

// The addresses `host` resolves to (an IP literal resolves to itself). NotFound with the
// resolver's reason.
absl::StatusOr<std::vector<std::string>> Resolve(const std::string& host);

// Opens and closes a TCP connection to host:port (the first address that answers).
// Unavailable with the reason ("Connection refused", "timed out after 5s").
absl::Status TcpConnect(const std::string& host, int port, absl::Duration timeout);

// The SHA-1 thumbprint ("AA:BB:...") of the certificate the TLS server at host:port presents,
// with SNI `host`, no verification.
absl::StatusOr<std::string> ServerThumbprint(const std::string& host, int port,
                                             absl::Duration timeout);

}  // namespace ccm::diagnose
