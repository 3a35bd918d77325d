#include "cloud/core/node_labels.h"

#include <gtest/gtest.h>

#include "testing/fake_instances.h"

namespace ccm::cloud {
namespace {

InstanceMetadata Md(std::string type, std::string zone = "", std::string region = "",
                    Labels additional = {}) {
  InstanceMetadata m;
  m.instance_type = std::move(type);
  m.zone = std::move(zone);
  m.region = std::move(region);
  m.additional_labels = std::move(additional);
  return m;
}

const char* kType = "vsphere-vm.cpu-2.mem-4gb.os-ubuntu";

TEST(ComputeNodeLabelsTest, Table) {
  struct Case {
    const char* name;
    Labels existing;
    InstanceMetadata md;
    Labels extra;
    Labels want;
  } cases[] = {
      {"InstanceTypeBothSpellings",
       {{"kubernetes.io/hostname", "n1"}},
       Md(kType),
       {},
       {{"kubernetes.io/hostname", "n1"},
        {"node.kubernetes.io/instance-type", kType},
        {"beta.kubernetes.io/instance-type", kType}}},
      {"ZoneAndRegionBothSpellings",
       {},
       Md(kType, "za", "r1"),
       {},
       {{"node.kubernetes.io/instance-type", kType},
        {"beta.kubernetes.io/instance-type", kType},
        {"topology.kubernetes.io/zone", "za"},
        {"failure-domain.beta.kubernetes.io/zone", "za"},
        {"topology.kubernetes.io/region", "r1"},
        {"failure-domain.beta.kubernetes.io/region", "r1"}}},
      {"NoZonesConfiguredNoZoneLabels", {}, Md(""), {}, {}},
      {"ProviderLabelsFollowTheVm",
       {{"topology.kubernetes.io/zone", "old"}, {"node.kubernetes.io/instance-type", "old"}},
       Md(kType, "new", ""),
       {},
       {{"topology.kubernetes.io/zone", "new"},
        {"failure-domain.beta.kubernetes.io/zone", "new"},
        {"node.kubernetes.io/instance-type", kType},
        {"beta.kubernetes.io/instance-type", kType}}},
      {"ExtrasAdded",
       {},
       Md(""),
       {{"team", "a"}, {"tier", "gold"}},
       {{"team", "a"}, {"tier", "gold"}}},
      {"ExtrasNeverOverwrite",
       {{"team", "set-by-someone-else"}},
       Md(""),
       {{"team", "a"}, {"tier", "gold"}},
       {{"team", "set-by-someone-else"}, {"tier", "gold"}}},
      {"ExtrasNeverOverwriteProviderLabels",
       {},
       Md(kType, "za", "r1"),
       {{"topology.kubernetes.io/zone", "from-flag"}},
       {{"node.kubernetes.io/instance-type", kType},
        {"beta.kubernetes.io/instance-type", kType},
        {"topology.kubernetes.io/zone", "za"},
        {"failure-domain.beta.kubernetes.io/zone", "za"},
        {"topology.kubernetes.io/region", "r1"},
        {"failure-domain.beta.kubernetes.io/region", "r1"}}},
      {"AdditionalLabelsNeverOverwriteAndWinOverExtras",
       {{"a", "existing"}},
       Md("", "", "", {{"a", "md"}, {"b", "md"}}),
       {{"b", "extra"}, {"c", "extra"}},
       {{"a", "existing"}, {"b", "md"}, {"c", "extra"}}},
      // Kubernetes-namespace extras are never written, even where the key is free.
      {"KubernetesNamespaceExtrasNeverWritten",
       {},
       Md(""),
       {{"node.kubernetes.io/exclude-from-external-load-balancers", "true"},
        {"k8s.io/x", "1"},
        {"team", "a"}},
       {{"team", "a"}}},
      {"OnlyRegion",
       {},
       Md("", "", "r1"),
       {},
       {{"topology.kubernetes.io/region", "r1"},
        {"failure-domain.beta.kubernetes.io/region", "r1"}}},
  };
  for (const Case& c : cases) {
    const Labels got = ComputeNodeLabels(c.existing, c.md, c.extra);
    EXPECT_EQ(got, c.want) << c.name;
    // Idempotent: applying again to the result changes nothing.
    EXPECT_EQ(ComputeNodeLabels(got, c.md, c.extra), got) << c.name;
  }
}

TEST(LabelKeyTest, QualifiedNames) {
  struct Case {
    std::string key;
    bool ok;
  } cases[] = {
      {"team", true},
      {"example.com/team", true},
      {"a.b-c.example.com/Tier_1.x-y", true},
      {"k8s.io/x", true},
      {std::string(63, 'a'), true},
      {std::string(64, 'a'), false},
      {"", false},
      {"/team", false},
      {"example.com/", false},
      {"Example.com/team", false},
      {"a/b/c", false},
      {"-team", false},
      {"team-", false},
      {"te am", false},
      {"ex_ample.com/team", false},
      {std::string(254, 'a') + "/x", false},
  };
  for (const Case& c : cases) {
    absl::Status s = ValidateLabelKey(c.key);
    EXPECT_EQ(s.ok(), c.ok) << c.key << ": " << s;
    if (!s.ok()) {
      EXPECT_NE(s.message().find("\"" + c.key + "\""), std::string::npos) << s;
    }
  }
}

TEST(LabelKeyTest, KubernetesNamespaces) {
  struct Case {
    std::string key;
    bool kubernetes;
  } cases[] = {
      {"kubernetes.io/hostname", true},
      {"node.kubernetes.io/x", true},
      {"a.b.kubernetes.io/x", true},
      {"k8s.io/x", true},
      {"sub.k8s.io/x", true},
      {"kubernetes.io", false},      // no prefix: a plain name
      {"mykubernetes.io/x", false},  // not a subdomain
      {"kubernetes.io.example.com/x", false},
      {"example.com/kubernetes.io", false},
      {"team", false},
  };
  for (const Case& c : cases) EXPECT_EQ(IsKubernetesLabel(c.key), c.kubernetes) << c.key;
}

TEST(ValidateExtraLabelsTest, DropsKubernetesKeysWithAWarningAndRejectsBadOnes) {
  auto got =
      ValidateExtraLabels({{"team", "a"}, {"node.kubernetes.io/role", "x"}, {"k8s.io/y", ""}});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->labels, (Labels{{"team", "a"}}));
  ASSERT_EQ(got->warnings.size(), 2u);
  EXPECT_NE(got->warnings[0].find("\"k8s.io/y\""), std::string::npos);
  EXPECT_NE(got->warnings[1].find("\"node.kubernetes.io/role\" is in the kubernetes.io"),
            std::string::npos);

  auto bad_key = ValidateExtraLabels({{"team", "a"}, {"bad key", "b"}});
  ASSERT_FALSE(bad_key.ok());
  EXPECT_NE(bad_key.status().message().find("label key \"bad key\""), std::string::npos);
  auto bad_value = ValidateExtraLabels({{"team", "-a"}});
  ASSERT_FALSE(bad_value.ok());
  EXPECT_NE(bad_value.status().message().find("label \"team\" has an invalid value \"-a\""),
            std::string::npos);
}

TEST(FakeInstancesTest, ContractShapes) {
  FakeInstances fake;
  NodeIdentity n{"n1"};
  FakeInstances::Vm vm;
  vm.metadata = Md(kType);
  fake.SetVm("n1", vm);
  EXPECT_TRUE(*fake.InstanceExists(n));
  EXPECT_FALSE(*fake.InstanceShutdown(n));
  EXPECT_EQ(fake.GetInstanceMetadata(n)->instance_type, kType);

  fake.SetError(absl::UnavailableError("vc down"));
  EXPECT_EQ(fake.InstanceExists(n).status().code(), absl::StatusCode::kUnavailable);
  fake.SetError(absl::OkStatus());

  fake.SetNodeError("n1", absl::FailedPreconditionError("no IP"));
  EXPECT_EQ(fake.GetInstanceMetadata(n).status().code(), absl::StatusCode::kFailedPrecondition);
  fake.SetNodeError("n1", absl::OkStatus());

  fake.RemoveVm("n1");
  EXPECT_FALSE(*fake.InstanceExists(n));
  EXPECT_EQ(fake.InstanceShutdown(n).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(fake.GetInstanceMetadata(n).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(fake.calls(), 8);
}

}  // namespace
}  // namespace ccm::cloud
