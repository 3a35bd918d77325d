// `kubectl apply --dry-run=client -f manifests/` against the API emulator with its kubeconfig.
// The emulator serves the kinds the binary uses (core, coordination, events); kinds it does not
// serve (RBAC, apps, ...) cannot be mapped by kubectl, so the test accepts exactly those as
// "resource mapping not found" and requires every other object to pass the dry run. Validation
// needs the server's OpenAPI schemas; when the emulator has none, the run uses --validate=false.
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
  const std::string base = absl::StrCat("kubectl --kubeconfig ", dir, "/kubeconfig apply --dry-run=client -f ",
                                        SourceDir(), "/manifests/");
  auto [code, out] = RunCommand(base);
  if (code == 0) {
    std::cout << out;
    RemoveTempDir(dir);
    return;  // full validation passed
  }
  ASSERT_TRUE(absl::StrContains(out, "openapi") || absl::StrContains(out, "resource mapping not found"))
      << out;
  std::tie(code, out) = RunCommand(base + " --validate=false");
  const std::set<std::string> unserved = {"ServiceAccount", "Role", "ClusterRole", "RoleBinding",
                                          "ClusterRoleBinding", "DaemonSet", "Deployment",
                                          "PodDisruptionBudget"};
  int accepted = 0;
  for (absl::string_view line : absl::StrSplit(out, '\n', absl::SkipEmpty())) {
    if (absl::StrContains(line, "(dry run)")) {
      ++accepted;
      continue;
    }
    if (line == "ensure CRDs are installed first") continue;
    auto kind_at = line.find("no matches for kind \"");
    ASSERT_NE(kind_at, absl::string_view::npos) << "unexpected kubectl output: " << line << "\n" << out;
    absl::string_view rest = line.substr(kind_at + 21);
    std::string kind(rest.substr(0, rest.find('"')));
    EXPECT_TRUE(unserved.count(kind)) << "kind " << kind << " failed the dry run: " << line;
  }
  EXPECT_GE(accepted, 2) << "the ConfigMap and the Secret pass the dry run\n" << out;
  std::cout << out;
  RemoveTempDir(dir);
}

}  // namespace
}  // namespace ccm::integration
