#include "kube/errors.h"

#include <cstdlib>

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace ccm::kube {
namespace {

constexpr absl::string_view kPayloadUrl = "ccm.kube/status";

std::string DefaultReason(int code) {
  switch (code) {
    case 400:
      return std::string(kReasonBadRequest);
    case 401:
      return std::string(kReasonUnauthorized);
    case 403:
      return std::string(kReasonForbidden);
    case 404:
      return std::string(kReasonNotFound);
    case 409:
      return std::string(kReasonConflict);
    case 410:
      return std::string(kReasonGone);
    case 422:
      return std::string(kReasonInvalid);
    case 429:
      return std::string(kReasonTooManyRequests);
    case 500:
      return std::string(kReasonInternalError);
    case 503:
      return std::string(kReasonServiceUnavailable);
    case 504:
      return std::string(kReasonServerTimeout);
    default:
      return "";
  }
}

absl::StatusCode CodeFor(int http, absl::string_view reason) {
  if (reason == kReasonAlreadyExists) return absl::StatusCode::kAlreadyExists;
  if (reason == kReasonServerTimeout) return absl::StatusCode::kUnavailable;
  if (reason == kReasonExpired || reason == kReasonGone) return absl::StatusCode::kOutOfRange;
  switch (http) {
    case 400:
      return absl::StatusCode::kInvalidArgument;
    case 401:
      return absl::StatusCode::kUnauthenticated;
    case 403:
      return absl::StatusCode::kPermissionDenied;
    case 404:
      return absl::StatusCode::kNotFound;
    case 405:
      return absl::StatusCode::kUnimplemented;
    case 409:
      return absl::StatusCode::kAborted;
    case 410:
      return absl::StatusCode::kOutOfRange;
    case 422:
      return absl::StatusCode::kInvalidArgument;
    case 429:
      return absl::StatusCode::kResourceExhausted;
    case 500:
      return absl::StatusCode::kInternal;
    case 502:
    case 503:
    case 504:
      return absl::StatusCode::kUnavailable;
    default:
      return http >= 500 ? absl::StatusCode::kInternal : absl::StatusCode::kUnknown;
  }
}

absl::Status Make(absl::string_view verb, absl::string_view path, int http, std::string reason,
                  std::string message, int64_t retry_after_s) {
  if (reason.empty()) reason = DefaultReason(http);
  if (message.empty()) message = absl::StrCat("HTTP ", http);
  std::string text = absl::StrCat(verb, " ", path, ": ", message, " (",
                                  reason.empty() ? "Unknown" : reason, ", HTTP ", http, ")");
  absl::Status s(CodeFor(http, reason), text);
  nlohmann::json p = {{"code", http}, {"reason", reason}, {"retryAfter", retry_after_s}};
  s.SetPayload(kPayloadUrl, absl::Cord(p.dump()));
  return s;
}

nlohmann::json Payload(const absl::Status& s) {
  auto c = s.GetPayload(kPayloadUrl);
  if (!c.has_value()) return nlohmann::json::object();
  auto j = nlohmann::json::parse(std::string(*c), nullptr, /*allow_exceptions=*/false);
  return j.is_object() ? j : nlohmann::json::object();
}

}  // namespace

absl::Status StatusFromStatusObject(absl::string_view verb, absl::string_view path,
                                    const nlohmann::json& st) {
  int code = 500;
  std::string reason, message;
  int64_t retry = -1;
  if (st.is_object()) {
    if (auto it = st.find("code"); it != st.end() && it->is_number_integer()) code = it->get<int>();
    if (auto it = st.find("reason"); it != st.end() && it->is_string())
      reason = it->get<std::string>();
    if (auto it = st.find("message"); it != st.end() && it->is_string())
      message = it->get<std::string>();
    if (auto d = st.find("details"); d != st.end() && d->is_object()) {
      if (auto r = d->find("retryAfterSeconds"); r != d->end() && r->is_number_integer()) {
        retry = r->get<int64_t>();
      }
    }
  }
  return Make(verb, path, code, reason, message, retry);
}

absl::Status StatusFromResponse(absl::string_view verb, absl::string_view path, int http_code,
                                absl::string_view body, absl::string_view retry_after) {
  std::string reason, message;
  int64_t retry = -1;
  auto j = nlohmann::json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_object() && j.value("kind", "") == "Status") {
    reason = j.value("reason", "");
    message = j.value("message", "");
    if (auto d = j.find("details"); d != j.end() && d->is_object()) {
      if (auto r = d->find("retryAfterSeconds"); r != d->end() && r->is_number_integer()) {
        retry = r->get<int64_t>();
      }
    }
  } else if (!body.empty()) {
    message = std::string(body.substr(0, 512));
    while (!message.empty() && (message.back() == '\n' || message.back() == '\r'))
      message.pop_back();
  }
  int64_t header_retry = 0;
  if (!retry_after.empty() && absl::SimpleAtoi(retry_after, &header_retry) && header_retry >= 0) {
    retry = header_retry;
  }
  return Make(verb, path, http_code, reason, message, retry);
}

std::string Reason(const absl::Status& s) {
  auto p = Payload(s);
  auto it = p.find("reason");
  return it != p.end() && it->is_string() ? it->get<std::string>() : "";
}

int HttpCode(const absl::Status& s) {
  auto p = Payload(s);
  auto it = p.find("code");
  return it != p.end() && it->is_number_integer() ? it->get<int>() : 0;
}

bool IsNotFoundError(const absl::Status& s) {
  return Reason(s) == kReasonNotFound || HttpCode(s) == 404;
}
bool IsAlreadyExistsError(const absl::Status& s) { return Reason(s) == kReasonAlreadyExists; }
bool IsConflict(const absl::Status& s) {
  return HttpCode(s) == 409 && Reason(s) != kReasonAlreadyExists;
}
bool IsGone(const absl::Status& s) {
  std::string r = Reason(s);
  return HttpCode(s) == 410 || r == kReasonGone || r == kReasonExpired;
}
bool IsForbidden(const absl::Status& s) { return HttpCode(s) == 403; }
bool IsUnauthorized(const absl::Status& s) { return HttpCode(s) == 401; }
bool IsTooManyRequests(const absl::Status& s) { return HttpCode(s) == 429; }
bool IsInvalid(const absl::Status& s) { return HttpCode(s) == 422 || Reason(s) == kReasonInvalid; }
bool IsServerTimeout(const absl::Status& s) {
  return Reason(s) == kReasonServerTimeout || HttpCode(s) == 504;
}
bool IsInternalError(const absl::Status& s) {
  return Reason(s) == kReasonInternalError || HttpCode(s) == 500;
}

std::optional<absl::Duration> RetryAfter(const absl::Status& s) {
  auto p = Payload(s);
  auto it = p.find("retryAfter");
  if (it == p.end() || !it->is_number_integer() || it->get<int64_t>() < 0) return std::nullopt;
  return absl::Seconds(it->get<int64_t>());
}

}  // namespace ccm::kube
