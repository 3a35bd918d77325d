#include "csi/core/cluster_distribution.h"

#include <gtest/gtest.h>

namespace ccm::csi {
namespace {

TEST(ClusterDistributionTest, FromTheServersGitVersion) {
  struct Case {
    const char* git_version;
    const char* want;
  } cases[] = {
      {"v1.29.3+rke2r1", "Rancher"},
      {"v1.27.4-eks-2d98532", "EKS"},
      {"v1.27.3-gke.100", "Anthos"},
      {"v1.26.5+vmware.2-fips.1", "TanzuKubernetesCluster"},
      {"v1.25.0+wcp.3", "Supervisor"},
      {"v1.24.1-openshift-4.11", "Openshift"},
      {"v1.20.0-docker-1", "DockerEE"},
      {"v1.28.1-aks", "AKS"},
      {"v1.30.2", "VanillaK8S"},
      {"v1.24.0-alpha.1", "VanillaK8S"},
      {"", "VanillaK8S"},
      {"v1.29.3+RKE2", "VanillaK8S"},  // case-sensitive, as the reference
  };
  for (const Case& c : cases)
    EXPECT_EQ(ClusterDistributionOf(c.git_version), c.want) << c.git_version;
}

}  // namespace
}  // namespace ccm::csi
