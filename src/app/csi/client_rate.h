#pragma once
// The Kubernetes client rate of every mode, as the reference sets its in-cluster client
// (pkg/kubernetes getClientThroughput): INCLUSTER_CLIENT_QPS and INCLUSTER_CLIENT_BURST, 50 each
// when unset; a value that is not a number or lies outside 5..1000 is warned about and the
// default kept. The reference's manifests set 100 and 100. Pure: the environment is passed in.

#include <map>
#include <string>
#include <vector>

namespace ccm::app {

inline constexpr char kEnvInClusterClientQps[] = "INCLUSTER_CLIENT_QPS";
inline constexpr char kEnvInClusterClientBurst[] = "INCLUSTER_CLIENT_BURST";

struct ClientRate {
  double qps = 50;
  int burst = 50;
  std::vector<std::string> warnings;  // one per variable refused, naming it and its value
};

ClientRate InClusterClientRate(const std::map<std::string, std::string>& env);

// "Kubernetes client rate: 100 requests/s, burst 100": how each mode says which it runs with.
std::string DescribeClientRate(const ClientRate& r);

}  // namespace ccm::app
