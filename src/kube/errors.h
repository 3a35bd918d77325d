#pragma once
// Kubernetes `Status` error bodies mapped onto absl::Status.
//
// Every non-2xx answer becomes an absl::Status whose message reads
//   "<VERB> <path>: <server message> (<Reason>, HTTP <code>)"
// and which carries a payload with the HTTP code, the Kubernetes reason and Retry-After, so the
// helpers below work even after a caller wrapped the status with ccm::Annotate (payloads survive).
//
// Code mapping: 400 BadRequest -> InvalidArgument, 401 -> Unauthenticated, 403 -> PermissionDenied,
// 404 -> NotFound, 409 AlreadyExists -> AlreadyExists, 409 Conflict -> Aborted, 410 Gone/Expired ->
// OutOfRange, 422 Invalid -> InvalidArgument, 429 -> ResourceExhausted, 500 InternalError ->
// Internal, 503 / 504 / ServerTimeout -> Unavailable.

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"

namespace ccm::kube {

// Kubernetes StatusReason values (metav1.StatusReason).
inline constexpr absl::string_view kReasonNotFound = "NotFound";
inline constexpr absl::string_view kReasonAlreadyExists = "AlreadyExists";
inline constexpr absl::string_view kReasonConflict = "Conflict";
inline constexpr absl::string_view kReasonGone = "Gone";
inline constexpr absl::string_view kReasonExpired = "Expired";
inline constexpr absl::string_view kReasonForbidden = "Forbidden";
inline constexpr absl::string_view kReasonUnauthorized = "Unauthorized";
inline constexpr absl::string_view kReasonTooManyRequests = "TooManyRequests";
inline constexpr absl::string_view kReasonInvalid = "Invalid";
inline constexpr absl::string_view kReasonServerTimeout = "ServerTimeout";
inline constexpr absl::string_view kReasonInternalError = "InternalError";
inline constexpr absl::string_view kReasonBadRequest = "BadRequest";
inline constexpr absl::string_view kReasonServiceUnavailable = "ServiceUnavailable";

// Builds the status for an HTTP answer. `body` may be a Status JSON object, other text or empty;
// `retry_after` is the Retry-After header ("" when absent).
absl::Status StatusFromResponse(absl::string_view verb, absl::string_view path, int http_code,
                                absl::string_view body, absl::string_view retry_after);
// Same for a Status object received in a watch ERROR event.
absl::Status StatusFromStatusObject(absl::string_view verb, absl::string_view path,
                                    const nlohmann::json& status);

// The Kubernetes reason carried by `s` ("" for statuses that did not come from the API server).
std::string Reason(const absl::Status& s);
// The HTTP code carried by `s` (0 when none).
int HttpCode(const absl::Status& s);

// Named ...Error because absl::IsNotFound / absl::IsAlreadyExists exist and ADL would make an
// unqualified call ambiguous. (absl::IsNotFound(s) is also true for these, and for non-API errors.)
bool IsNotFoundError(const absl::Status& s);
bool IsAlreadyExistsError(const absl::Status& s);
bool IsConflict(const absl::Status& s);  // 409 Conflict (stale resourceVersion / precondition)
bool IsGone(const absl::Status& s);      // 410: resourceVersion too old; relist
bool IsForbidden(const absl::Status& s);
bool IsUnauthorized(const absl::Status& s);
bool IsTooManyRequests(const absl::Status& s);
bool IsInvalid(const absl::Status& s);
bool IsServerTimeout(const absl::Status& s);
bool IsInternalError(const absl::Status& s);
// Retry-After carried by a 429/503 (or a Status details.retryAfterSeconds), if any.
std::optional<absl::Duration> RetryAfter(const absl::Status& s);

}  // namespace ccm::kube
