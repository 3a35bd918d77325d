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
#include "integration/harness.h"

namespace ccm::integration {
namespace {

std::pair<int, std::string> RunCommand(const std::string& cmd) {
  std::string out;
  FILE* f = popen((cmd + " 2>&1").c_str(), "r");
  if (f == nullptr) return {-1, ""};
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), f)) > 0) out.append(buf.data(), n);
  int status = pclose(f);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST(KubectlDryRunTest, ManifestsApplyAgainstTheEmulator) {
  testing::KubeEmulator emu;
  ASSERT_TRUE(emu.Start().ok());
  const std::string dir = MakeTempDir("dryrun");
  ASSERT_TRUE(emu.WriteKubeconfig(dir + "/kubeconfig").ok());
  const std::string base =
      absl::StrCat("kubectl --kubeconfig ", dir, "/kubeconfig apply --dry-run=client -f ",
                   SourceDir(), "/manifests/");
  auto [code, out] = RunCommand(base);
  ASSERT_EQ(code, 0) << out;
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
