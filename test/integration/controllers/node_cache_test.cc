// The shared Node cache pieces against the API emulator: the providerID index follows adds,
// providerID changes and deletes, and a second Node claiming an ID does not erase the first's.
#include "controllers/node_cache.h"

#include "gtest/gtest.h"
#include "integration/controllers/controllers_test_env.h"
#include "kube/objects.h"

namespace ccm::controllers {
namespace {

using testing::Env;
using testing::Eventually;

TEST(ProviderIdIndexTest, FollowsTheNodeCache) {
  Env env;
  ASSERT_TRUE(env.Init().ok());
  ProviderIdIndex index(*env.nodes);
  auto node_for = [&](const std::string& pid) { return index.NodeFor(pid).value_or(""); };

  env.CreateKubeletNode("n1", true, "vsphere://aaa");
  env.CreateKubeletNode("n2", true);  // no providerID yet
  ASSERT_TRUE(Eventually([&] { return node_for("vsphere://aaa") == "n1"; }));
  EXPECT_FALSE(index.NodeFor("").has_value());

  env.EditNode("n2", [](kube::Json& n) { kube::SetProviderId(n, "vsphere://bbb"); });
  ASSERT_TRUE(Eventually([&] { return node_for("vsphere://bbb") == "n2"; }));

  env.EditNode("n1", [](kube::Json& n) { kube::SetProviderId(n, "vsphere://ccc"); });
  ASSERT_TRUE(Eventually([&] { return node_for("vsphere://ccc") == "n1"; }));
  EXPECT_FALSE(index.NodeFor("vsphere://aaa").has_value());

  ASSERT_TRUE(env.emulator.Delete("nodes", "", "n2").ok());
  ASSERT_TRUE(Eventually([&] { return !index.NodeFor("vsphere://bbb").has_value(); }));
  EXPECT_EQ(node_for("vsphere://ccc"), "n1");
  env.nodes->Stop();  // before the index goes away
}

TEST(NodeCacheOptionsTest, TrimsAndCompacts) {
  kube::InformerOptions o = NodeCacheOptions();
  EXPECT_TRUE(o.compact_store);
  ASSERT_TRUE(o.transform);
  kube::Json n = {{"metadata", {{"name", "n"}, {"managedFields", kube::Json::array()}}},
                  {"status", {{"images", kube::Json::array()}}}};
  o.transform(n);
  EXPECT_FALSE(n["metadata"].contains("managedFields"));
  EXPECT_FALSE(n["status"].contains("images"));
}

}  // namespace
}  // namespace ccm::controllers
