#include "cloud/core/node_labels.h"

#include <gtest/gtest.h>

#include "cloud/core/fake_instances.h"

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
      {"ExtrasAdded", {}, Md(""), {{"team", "a"}, {"tier", "gold"}}, {{"team", "a"}, {"tier", "gold"}}},
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
      {"OnlyRegion", {}, Md("", "", "r1"), {},
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
