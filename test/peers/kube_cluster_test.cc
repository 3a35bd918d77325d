// KubeCluster's own housekeeping (no peer program needed; in peers_api_corpus_test's binary).
#include "peers/kube_cluster.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace ccm::peers {
namespace {
namespace fs = std::filesystem;

// A killed test's etcd store goes; a running test's, and anything not a store, stays.
TEST(KubeClusterTest, StoresOfGoneProcessesAreRemoved) {
  std::string tmpl = (fs::temp_directory_path() / "shm-XXXXXX").string();
  ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
  const fs::path dir = tmpl;
  const pid_t gone = fork();
  ASSERT_GE(gone, 0);
  if (gone == 0) _exit(0);
  ASSERT_EQ(waitpid(gone, nullptr, 0), gone);  // reaped: no process has that pid now
  const fs::path orphan = dir / absl::StrCat("peers-etcd-", gone, "-2379");
  const fs::path live = dir / absl::StrCat("peers-etcd-", getpid(), "-2380");
  const fs::path legacy = dir / "peers-etcd-2381";  // the old name: nothing says whose it is
  const fs::path other = dir / absl::StrCat("other-etcd-", gone, "-2382");
  for (const fs::path& p : {orphan, live, legacy, other}) {
    ASSERT_TRUE(fs::create_directories(p / "member"));
  }
  RemoveOrphanStores(dir.string());
  EXPECT_FALSE(fs::exists(orphan));
  EXPECT_TRUE(fs::exists(live / "member"));
  EXPECT_TRUE(fs::exists(legacy));
  EXPECT_TRUE(fs::exists(other));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ccm::peers
