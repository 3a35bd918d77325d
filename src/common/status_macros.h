#pragma once
// Small helpers for absl::Status propagation. Errors are values across every module boundary;
// context is added by the caller with Annotate().

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

#define CCM_CONCAT_INNER(a, b) a##b
#define CCM_CONCAT(a, b) CCM_CONCAT_INNER(a, b)

#define CCM_RETURN_IF_ERROR(expr)              \
  do {                                         \
    ::absl::Status ccm_status_ = (expr);       \
    if (!ccm_status_.ok()) return ccm_status_; \
  } while (0)

#define CCM_ASSIGN_OR_RETURN(lhs, expr) \
  CCM_ASSIGN_OR_RETURN_IMPL(CCM_CONCAT(ccm_statusor_, __LINE__), lhs, expr)
#define CCM_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return std::move(tmp).status();  \
  lhs = std::move(tmp).value()

namespace ccm {

// Returns a status with the same code and "<context>: <message>"; payloads are kept.
inline absl::Status Annotate(const absl::Status& s, absl::string_view context) {
  if (s.ok()) return s;
  absl::Status out(s.code(), absl::StrCat(context, ": ", s.message()));
  s.ForEachPayload(
      [&](absl::string_view url, const absl::Cord& payload) { out.SetPayload(url, payload); });
  return out;
}

}  // namespace ccm
