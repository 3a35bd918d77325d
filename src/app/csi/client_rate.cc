#include "app/csi/client_rate.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace ccm::app {
namespace {

constexpr double kMin = 5, kMax = 1000;

std::string Refused(const char* name, const std::string& value) {
  return absl::StrCat(name, "=\"", value,
                      "\" is not a number from 5 to 1000: the default 50 is used");
}

}  // namespace

ClientRate InClusterClientRate(const std::map<std::string, std::string>& env) {
  ClientRate r;
  if (auto it = env.find(kEnvInClusterClientQps); it != env.end() && !it->second.empty()) {
    double v = 0;
    if (absl::SimpleAtod(it->second, &v) && v >= kMin && v <= kMax) {
      r.qps = v;
    } else {
      r.warnings.push_back(Refused(kEnvInClusterClientQps, it->second));
    }
  }
  if (auto it = env.find(kEnvInClusterClientBurst); it != env.end() && !it->second.empty()) {
    int v = 0;
    if (absl::SimpleAtoi(it->second, &v) && v >= kMin && v <= kMax) {
      r.burst = v;
    } else {
      r.warnings.push_back(Refused(kEnvInClusterClientBurst, it->second));
    }
  }
  return r;
}

std::string DescribeClientRate(const ClientRate& r) {
  return absl::StrCat("Kubernetes client rate: ", r.qps, " requests/s, burst ", r.burst,
                      " (INCLUSTER_CLIENT_QPS, INCLUSTER_CLIENT_BURST)");
}

}  // namespace ccm::app
