#pragma once
// Logging in klog's text format on stderr:
//   I1121 19:08:00.123456    1234 file.cc:42] message
// Levels: LOG_INFO/LOG_WARN/LOG_ERROR always print (info subject to nothing but a global sink),
// VLOG(n, ...) prints when n <= the -v verbosity. Messages use fmt syntax ("{}").
// Never pass a credential: credentials live in ccm::Secret, which formats as <redacted>.

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "spdlog/fmt/ostr.h"
#include "spdlog/spdlog.h"

// Debian's abseil has its own string_view type; let fmt print it and absl::Status directly.
template <>
struct fmt::formatter<absl::string_view> : fmt::formatter<fmt::string_view> {
  template <typename Ctx>
  auto format(absl::string_view s, Ctx& ctx) const {
    return fmt::formatter<fmt::string_view>::format(fmt::string_view(s.data(), s.size()), ctx);
  }
};
template <>
struct fmt::formatter<absl::Status> : fmt::formatter<fmt::string_view> {
  template <typename Ctx>
  auto format(const absl::Status& s, Ctx& ctx) const {
    std::string text = s.ToString();
    return fmt::formatter<fmt::string_view>::format(fmt::string_view(text), ctx);
  }
};

namespace ccm::logging {

// Sets up the klog-format stderr logger (idempotent). Tests may install their own sink instead.
void Init(int verbosity);
void SetVerbosity(int v);
int Verbosity();
// Replaces the sinks of the process logger (e.g. with a capturing sink in tests).
void SetSink(std::shared_ptr<spdlog::sinks::sink> sink);
spdlog::logger* Logger();
// The klog pattern, exposed for sinks that want to reproduce it.
inline constexpr const char* kKlogPattern = "%L%m%d %H:%M:%S.%f %7t %s:%#] %v";

}  // namespace ccm::logging

#define CCM_LOG_AT(level, ...) SPDLOG_LOGGER_CALL(::ccm::logging::Logger(), level, __VA_ARGS__)
#define LOG_INFO(...) CCM_LOG_AT(spdlog::level::info, __VA_ARGS__)
#define LOG_WARN(...) CCM_LOG_AT(spdlog::level::warn, __VA_ARGS__)
#define LOG_ERROR(...) CCM_LOG_AT(spdlog::level::err, __VA_ARGS__)
#define VLOG(n, ...)                                               \
  do {                                                             \
    if (::ccm::logging::Verbosity() >= (n)) LOG_INFO(__VA_ARGS__); \
  } while (0)
