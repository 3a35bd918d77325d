#pragma once
// Request logging without secrets. The spec marks every field that may carry credentials with
// the `csi_secret` field option (CreateVolumeRequest.secrets, NodeStageVolumeRequest.secrets,
// ...); a service that logs a request prints RedactedDebugString(request), which replaces each
// such field, at any depth, with a marker so the log shows that secrets were passed but not what
// they were.

#include <google/protobuf/message.h>

#include <string>

namespace ccm::csi {

inline constexpr const char* kRedacted = "<redacted>";

// One-line text form of `m` with every csi_secret field's values replaced by kRedacted.
std::string RedactedDebugString(const google::protobuf::Message& m);

}  // namespace ccm::csi
