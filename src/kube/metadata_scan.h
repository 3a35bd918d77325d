#pragma once
// The identity of a Kubernetes object read from its JSON without parsing the rest: a writer that
// needs only what it stored (a Node PATCH answers with the whole Node, kilobytes) reads the
// top-level "metadata" object's identity only: simdjson indexes the answer and nothing else is
// built (fast_json.h); where simdjson does not take it, nlohmann's SAX parse scans up to the end
// of that object, which the API server writes before spec and status, and stops there.

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace ccm::kube {

// {"metadata": {...}} with the string fields name, namespace, uid and resourceVersion of the
// object's metadata (those it has). Errors (InvalidArgument, naming `what`): malformed JSON
// before the end of the metadata, not an object, no metadata object.
absl::StatusOr<nlohmann::json> ScanMetadata(absl::string_view body, absl::string_view what);
// The same with nlohmann's parser alone (the fast path, fast_json.h, is tested against it).
absl::StatusOr<nlohmann::json> ScanMetadataWithNlohmann(absl::string_view body,
                                                        absl::string_view what);

// The same fields taken from a parsed object (for clients that have the whole answer).
nlohmann::json IdentityOf(const nlohmann::json& obj);

}  // namespace ccm::kube
