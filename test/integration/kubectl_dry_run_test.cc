// `kubectl apply --dry-run=client -f manifests/` against the API emulator with its kubeconfig.
// The emulator serves every kind of the manifests (ServiceAccount, RBAC, apps, policy besides the
// kinds the binary uses), so every object must pass, with kubectl's validation on.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/run_command.h"
#include "integration/harness.h"

namespace ccm::integration {
namespace {

TEST(KubectlDryRunTest, ManifestsApplyAgainstTheEmulator) {
  testing::KubeEmulator emu;
  ASSERT_TRUE(emu.Start().ok());
  const std::string dir = MakeTempDir("dryrun");
  ASSERT_TRUE(emu.WriteKubeconfig(dir + "/kubeconfig").ok());
  absl::StatusOr<CommandResult> r =
      RunCommand({"kubectl", "--kubeconfig", dir + "/kubeconfig", "apply", "--dry-run=client", "-f",
                  SourceDir() + "/manifests/"});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->exit_code, 0) << r->output;
  const std::string& out = r->output;
  // Every object of the manifests passes, with kubectl's validation on.
  for (const char* kind :
       {"serviceaccount/", "clusterrole.rbac.authorization.k8s.io/",
        "clusterrolebinding.rbac.authorization.k8s.io/", "role.rbac.authorization.k8s.io/",
        "rolebinding.rbac.authorization.k8s.io/", "configmap/", "secret/", "daemonset.apps/"}) {
    EXPECT_TRUE(absl::StrContains(out, kind)) << kind << " missing from:\n" << out;
  }
  EXPECT_FALSE(absl::StrContains(out, "error")) << out;
  std::cout << out;
  RemoveTempDir(dir);
}

}  // namespace
}  // namespace ccm::integration
