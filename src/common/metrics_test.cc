#include "common/metrics.h"

#include "gtest/gtest.h"

namespace ccm::metrics {
namespace {

TEST(MetricsTest, RendersCountersGaugesHistograms) {
  Registry r;
  Family* c = r.Counter("vsphere_requests_total", "vCenter requests.", {"method", "outcome"});
  c->Add({"RetrievePropertiesEx", "ok"});
  c->Add({"RetrievePropertiesEx", "ok"}, 2);
  c->Add({"Login", "error"});
  c->Add({"Login", "error"}, -5);  // ignored: counters only go up
  Family* g = r.Gauge("leader", "1 when leading.");
  g->Set({}, 1);
  Family* h = r.Histogram("latency_seconds", "Latency.", {"method"}, {0.1, 1});
  h->Observe({"Login"}, 0.05);
  h->Observe({"Login"}, 0.5);
  h->Observe({"Login"}, 5);
  int scrapes = 0;
  r.OnScrape([&] { ++scrapes; });
  const std::string text = r.Render();
  EXPECT_EQ(scrapes, 1);
  EXPECT_NE(text.find("# TYPE vsphere_requests_total counter\n"), std::string::npos);
  EXPECT_NE(text.find("vsphere_requests_total{method=\"RetrievePropertiesEx\",outcome=\"ok\"} 3\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("vsphere_requests_total{method=\"Login\",outcome=\"error\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("leader 1\n"), std::string::npos);
  EXPECT_NE(text.find("latency_seconds_bucket{method=\"Login\",le=\"0.1\"} 1\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("latency_seconds_bucket{method=\"Login\",le=\"1\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("latency_seconds_bucket{method=\"Login\",le=\"+Inf\"} 3\n"),
            std::string::npos);
  EXPECT_NE(text.find("latency_seconds_sum{method=\"Login\"} 5.55\n"), std::string::npos) << text;
  EXPECT_NE(text.find("latency_seconds_count{method=\"Login\"} 3\n"), std::string::npos);
  EXPECT_EQ(c->Value({"RetrievePropertiesEx", "ok"}), 3);
  EXPECT_EQ(h->Count({"Login"}), 3u);
}

TEST(MetricsTest, SameNameReturnsSameFamilyAndEscapes) {
  Registry r;
  Family* a = r.Counter("x_total", "X.", {"l"});
  EXPECT_EQ(a, r.Counter("x_total", "X.", {"l"}));
  a->Add({"quote\"back\\slash\nnl"});
  EXPECT_NE(r.Render().find(R"(x_total{l="quote\"back\\slash\nnl"} 1)"), std::string::npos);
  EXPECT_EQ(r.Find("x_total"), a);
  EXPECT_EQ(r.Find("nope"), nullptr);
}

}  // namespace
}  // namespace ccm::metrics
