#include "kube/quantity.h"

#include <gtest/gtest.h>

namespace ccm::kube::quantity_test {
namespace {

TEST(QuantityTest, ParsesTheForms) {
  struct Case {
    const char* text;
    long double value;
  };
  const Case cases[] = {
      {"1Gi", 1073741824.0L},
      {"1024Mi", 1073741824.0L},
      {"1073741824", 1073741824.0L},
      {"1.5Gi", 1610612736.0L},
      {"1G", 1e9L},
      {"500M", 5e8L},
      {"100m", 0.1L},
      {"2e3", 2000.0L},
      {"+3Ki", 3072.0L},
      {" 10Ti ", 10995116277760.0L},
      {"1E6", 1e6L},
      {"0", 0.0L},
  };
  for (const Case& c : cases) {
    absl::StatusOr<long double> v = ParseQuantity(c.text);
    ASSERT_TRUE(v.ok()) << c.text << ": " << v.status();
    EXPECT_NEAR(static_cast<double>(*v), static_cast<double>(c.value), 1e-6) << c.text;
  }
  EXPECT_LT(*ParseQuantity("1Gi"), *ParseQuantity("1025Mi"));
  for (const char* bad : {"", "Gi", "1GB", "1.2.3", "abc", "1e", "--1"}) {
    absl::StatusOr<long double> v = ParseQuantity(bad);
    ASSERT_FALSE(v.ok()) << bad;
    EXPECT_NE(v.status().message().find("not a quantity"), std::string::npos);
  }
}

}  // namespace
}  // namespace ccm::kube::quantity_test
