#include "kube/errors.h"

#include "common/status_macros.h"
#include "gtest/gtest.h"

namespace ccm::kube {
namespace {

std::string StatusJson(int code, const std::string& reason, const std::string& msg) {
  return nlohmann::json{{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Failure"},
                        {"code", code},     {"reason", reason},   {"message", msg}}
      .dump();
}

struct Case {
  int http;
  std::string reason;
  absl::StatusCode code;
  bool (*pred)(const absl::Status&);
};

TEST(Errors, TableMapsStatusBodies) {
  const Case cases[] = {
      {404, "NotFound", absl::StatusCode::kNotFound, IsNotFoundError},
      {409, "AlreadyExists", absl::StatusCode::kAlreadyExists, IsAlreadyExistsError},
      {409, "Conflict", absl::StatusCode::kAborted, IsConflict},
      {410, "Expired", absl::StatusCode::kOutOfRange, IsGone},
      {410, "Gone", absl::StatusCode::kOutOfRange, IsGone},
      {403, "Forbidden", absl::StatusCode::kPermissionDenied, IsForbidden},
      {401, "Unauthorized", absl::StatusCode::kUnauthenticated, IsUnauthorized},
      {429, "TooManyRequests", absl::StatusCode::kResourceExhausted, IsTooManyRequests},
      {422, "Invalid", absl::StatusCode::kInvalidArgument, IsInvalid},
      {504, "Timeout", absl::StatusCode::kUnavailable, IsServerTimeout},
      {500, "ServerTimeout", absl::StatusCode::kUnavailable, IsServerTimeout},
      {500, "InternalError", absl::StatusCode::kInternal, IsInternalError},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.reason);
    absl::Status s = StatusFromResponse("get", "/api/v1/nodes/n1", c.http,
                                        StatusJson(c.http, c.reason, "server says no"), "");
    EXPECT_EQ(s.code(), c.code);
    EXPECT_TRUE(c.pred(s));
    EXPECT_EQ(HttpCode(s), c.http);
    EXPECT_NE(s.message().find("get /api/v1/nodes/n1: server says no"), absl::string_view::npos)
        << s.message();
    // Helpers still work after callers add context.
    EXPECT_TRUE(c.pred(Annotate(s, "sync node n1")));
  }
}

TEST(Errors, ConflictIsNotAlreadyExists) {
  absl::Status exists =
      StatusFromResponse("create", "/p", 409, StatusJson(409, "AlreadyExists", "x"), "");
  EXPECT_FALSE(IsConflict(exists));
  absl::Status conflict =
      StatusFromResponse("update", "/p", 409, StatusJson(409, "Conflict", "x"), "");
  EXPECT_FALSE(IsAlreadyExistsError(conflict));
  EXPECT_TRUE(IsConflict(conflict));
}

TEST(Errors, RetryAfterFromHeaderOrDetails) {
  absl::Status h = StatusFromResponse("list", "/p", 429, "", "7");
  ASSERT_TRUE(RetryAfter(h).has_value());
  EXPECT_EQ(*RetryAfter(h), absl::Seconds(7));
  nlohmann::json body = {{"kind", "Status"},
                         {"code", 429},
                         {"reason", "TooManyRequests"},
                         {"details", {{"retryAfterSeconds", 3}}}};
  absl::Status d = StatusFromResponse("list", "/p", 429, body.dump(), "");
  EXPECT_EQ(RetryAfter(d), absl::Seconds(3));
  EXPECT_FALSE(RetryAfter(StatusFromResponse("get", "/p", 404, "", "")).has_value());
}

TEST(Errors, NonStatusBodiesAndPlainErrors) {
  absl::Status s = StatusFromResponse("get", "/p", 502, "bad gateway\n", "");
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("bad gateway"), absl::string_view::npos);
  // Only answers of the API server carry a Kubernetes reason.
  EXPECT_FALSE(IsNotFoundError(absl::NotFoundError("not from the API server")));
  EXPECT_EQ(Reason(absl::InternalError("x")), "");
}

TEST(Errors, WatchErrorObject) {
  nlohmann::json st = {{"kind", "Status"},
                       {"code", 410},
                       {"reason", "Expired"},
                       {"message", "too old resource version: 5 (10)"}};
  absl::Status s = StatusFromStatusObject("watch", "/api/v1/nodes", st);
  EXPECT_TRUE(IsGone(s));
  EXPECT_NE(s.message().find("too old resource version"), absl::string_view::npos);
}

}  // namespace
}  // namespace ccm::kube
