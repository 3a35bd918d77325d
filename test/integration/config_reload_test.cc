// The real binary with its --cloud-config edited while it runs (issue 10, item 6): an invalid edit
// keeps it running on the old config (error log + Warning Event), a [Nodes] edit applies live (the
// next Node is initialised with the new rules, same process), and a vCenter port edit makes it
// exit 1 after releasing the lease, so that the pod restarts with the new file.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "integration/harness.h"

namespace ccm::integration {
namespace {

// As a ConfigMap volume update does: the new content appears at once (rename), never half-written.
void Replace(const std::string& path, const std::string& content) {
  WriteFile(path + ".tmp", content);
  ASSERT_EQ(std::rename((path + ".tmp").c_str(), path.c_str()), 0);
}

std::vector<std::string> AddressTypes(testing::KubeEmulator& emu, const std::string& node) {
  std::vector<std::string> out;
  auto n = emu.Get("nodes", "", node);
  if (!n.ok()) return out;
  for (const auto& a :
       n->value("status", nlohmann::json::object()).value("addresses", nlohmann::json::array()))
    out.push_back(a.value("type", ""));
  return out;
}

bool HasEvent(testing::KubeEmulator& emu, const std::string& reason, const std::string& kind) {
  for (const auto& e : emu.List("events"))
    if (e.value("reason", "") == reason &&
        e.value("involvedObject", nlohmann::json::object()).value("kind", "") == kind)
      return true;
  return false;
}

TEST(ConfigReloadTest, InvalidKeepsRunningLiveAppliesRestartExits) {
  auto c = Cluster::Start("config_reload");
  ASSERT_TRUE(c.ok()) << c.status();
  Cluster& cl = **c;
  const std::string good = ReadFile(cl.config_path());
  ASSERT_TRUE(absl::StrContains(good, "vcenter:")) << good;
  int port = 0;
  auto p = cl.StartCcm("ccm", &port, {"--cloud-config-check-period=200ms"});
  ASSERT_TRUE(p.ok()) << p.status();
  ChildProcess& ccm = **p;
  ASSERT_TRUE(cl.WaitServing(ccm, port, absl::Seconds(20))) << ccm.Stderr();
  ASSERT_TRUE(cl.RegisterNode("node-1").ok());
  ASSERT_TRUE(WaitFor([&] { return !cl.ProviderId("node-1").empty(); }, absl::Seconds(30)))
      << ccm.Stderr();
  // The reference's default rules: one IP is both InternalIP and ExternalIP.
  EXPECT_EQ(AddressTypes(cl.emu(), "node-1"),
            (std::vector<std::string>{"Hostname", "InternalIP", "ExternalIP"}));

  // 1. Invalid: logged, a Warning Event on the Lease, the process keeps running on the old config.
  Replace(cl.config_path(), "global:\n  port: [unclosed\n");
  ASSERT_TRUE(WaitFor(
      [&] { return absl::StrContains(ccm.Stderr(), "is invalid, keeping the running one"); },
      absl::Seconds(10)))
      << ccm.Stderr();
  ASSERT_TRUE(WaitFor([&] { return HasEvent(cl.emu(), "InvalidCloudConfig", "Lease"); },
                      absl::Seconds(10)));
  EXPECT_TRUE(ccm.Running());
  ASSERT_TRUE(cl.RegisterNode("node-2").ok());  // still working, old rules
  ASSERT_TRUE(WaitFor([&] { return !cl.ProviderId("node-2").empty(); }, absl::Seconds(30)))
      << ccm.Stderr();
  EXPECT_EQ(AddressTypes(cl.emu(), "node-2"),
            (std::vector<std::string>{"Hostname", "InternalIP", "ExternalIP"}));

  // 2. Live: a [Nodes] rule that drops the ExternalIP; the same process initialises the next Node
  // with it.
  Replace(cl.config_path(),
          absl::StrCat(good, "nodes:\n  excludeExternalNetworkSubnetCidr: 10.0.0.0/8\n"));
  ASSERT_TRUE(WaitFor(
      [&] {
        return absl::StrContains(ccm.Stderr(),
                                 "cloud config: the controllers run with the new config");
      },
      absl::Seconds(10)))
      << ccm.Stderr();
  EXPECT_TRUE(absl::StrContains(ccm.Stderr(), "applying it live: [Nodes] changed"));
  EXPECT_TRUE(ccm.Running());
  ASSERT_TRUE(cl.RegisterNode("node-3").ok());
  ASSERT_TRUE(WaitFor([&] { return !cl.ProviderId("node-3").empty(); }, absl::Seconds(30)))
      << ccm.Stderr();
  EXPECT_EQ(AddressTypes(cl.emu(), "node-3"), (std::vector<std::string>{"Hostname", "InternalIP"}));
  EXPECT_TRUE(ccm.Running());

  // 3. Needs a restart (the vCenter's port): exit 1, lease released, the reason logged.
  std::string moved = good;
  const size_t at = moved.find("  port: ") + 8, end = moved.find('\n', at);
  ASSERT_NE(end, std::string::npos);
  const int old_port = std::stoi(moved.substr(at, end - at));
  moved.replace(at, end - at, std::to_string(old_port == 65535 ? old_port - 1 : old_port + 1));
  Replace(cl.config_path(), moved);
  std::optional<int> code = ccm.WaitExit(absl::Seconds(20));
  ASSERT_TRUE(code.has_value()) << ccm.Stderr();
  EXPECT_EQ(*code, 1) << ccm.Stderr();
  EXPECT_TRUE(
      absl::StrContains(ccm.Stderr(), "cannot apply live: vCenter \"vc-test\": port changed"))
      << ccm.Stderr();
  EXPECT_TRUE(
      absl::StrContains(ccm.Stderr(), "exiting so that the pod restarts with the new file"));
  EXPECT_EQ(cl.LeaseHolder(), "");
  // Nothing was deleted on the way out.
  EXPECT_TRUE(cl.NodeExists("node-1") && cl.NodeExists("node-2") && cl.NodeExists("node-3"));
}

}  // namespace
}  // namespace ccm::integration
