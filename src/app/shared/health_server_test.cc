#include "app/shared/health_server.h"

#include "absl/strings/str_cat.h"
#include "common/http_client.h"
#include "gtest/gtest.h"

namespace ccm::app {
namespace {

TEST(HealthServerTest, NamedChecksAndLiveness) {
  metrics::Registry reg;
  reg.Counter("demo_total", "Demo.")->Add({}, 2);
  HealthServer hs(&reg);
  absl::Status vc = absl::OkStatus();
  hs.AddCheck(
      "kubernetes", [] { return absl::OkStatus(); }, /*liveness=*/false);
  hs.AddCheck(
      "vcenter-vc1", [&] { return vc; }, /*liveness=*/false);
  auto kp = MakeSelfSigned("localhost");
  ASSERT_TRUE(kp.ok()) << kp.status();
  auto port = hs.Start("127.0.0.1", 0, &*kp);
  ASSERT_TRUE(port.ok()) << port.status();
  HttpClient c({.tls = {.ca_pem = kp->cert_pem}});
  auto get = [&](const std::string& path) {
    auto r = c.Do({.url = absl::StrCat("https://127.0.0.1:", *port, path)});
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : HttpResponse{};
  };
  EXPECT_EQ(get("/healthz").body, "ok");
  EXPECT_EQ(get("/readyz").status, 200);
  auto verbose = get("/healthz?verbose");
  EXPECT_NE(verbose.body.find("[+]vcenter-vc1 ok"), std::string::npos) << verbose.body;

  vc = absl::UnavailableError("vcenter vc1.example.com: connection refused");
  auto bad = get("/healthz");
  EXPECT_EQ(bad.status, 500);
  EXPECT_NE(bad.body.find("[-]vcenter-vc1 failed: reason withheld"), std::string::npos) << bad.body;
  EXPECT_NE(get("/readyz?verbose").body.find("connection refused"), std::string::npos);
  EXPECT_EQ(get("/readyz?exclude=vcenter-vc1").status, 200);
  auto live = get("/livez");
  EXPECT_EQ(live.status, 200) << live.body;  // vCenter trouble must not restart the pod

  auto m = get("/metrics");
  EXPECT_EQ(m.status, 200);
  EXPECT_NE(m.body.find("demo_total 2\n"), std::string::npos);
  EXPECT_NE(m.header("content-type").find("version=0.0.4"), std::string::npos);
  // Our client asks for gzip; metrics still come plain, with their length (no zlib state).
  EXPECT_EQ(m.header("content-encoding"), "");
  EXPECT_EQ(m.header("content-length"), absl::StrCat(m.body.size()));
  hs.Stop();
}

TEST(HealthServerTest, PortInUseIsAClearError) {
  metrics::Registry reg;
  HealthServer a(&reg), b(&reg);
  auto port = a.Start("127.0.0.1", 0, nullptr);
  ASSERT_TRUE(port.ok());
  auto again = b.Start("127.0.0.1", *port, nullptr);
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.status().message().find(absl::StrCat("cannot listen on 127.0.0.1:", *port)),
            std::string::npos);
}

}  // namespace
}  // namespace ccm::app
