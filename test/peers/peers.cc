#include "peers/peers.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "integration/child_process.h"

namespace ccm::peers {
namespace fs = std::filesystem;

std::string SourceDir() {
  const char* s = std::getenv("CCM_SOURCE_DIR");
  return s != nullptr ? s : ".";
}

std::string BuildDir() {
  const char* b = std::getenv("CCM_BINARY_DIR");
  return b != nullptr ? b : ".";
}

std::string PackDir() {
  std::vector<std::string> candidates;
  if (const char* p = std::getenv("PEERS_DIR"); p != nullptr && *p != '\0') {
    candidates.push_back(p);
  }
  candidates.push_back(SourceDir() + "/../shared/peers");
  for (const std::string& c : candidates) {
    std::error_code ec;
    if (fs::exists(c + "/unpack", ec)) return fs::weakly_canonical(c, ec).string();
  }
  return "";
}

absl::StatusOr<std::string> Run(const std::vector<std::string>& argv) {
  static int counter = 0;
  const std::string prefix =
      absl::StrCat(fs::temp_directory_path().string(), "/peers-run-", getpid(), "-", ++counter);
  auto p = integration::ChildProcess::Start(argv, prefix);
  if (!p.ok()) return p.status();
  std::optional<int> code = (*p)->WaitExit(absl::Minutes(5));
  std::string out = (*p)->Stdout(), err = (*p)->Stderr();
  std::error_code ec;
  fs::remove(prefix + ".stdout", ec);
  fs::remove(prefix + ".stderr", ec);
  if (!code) return absl::DeadlineExceededError(argv[0] + " ran over 5 minutes");
  if (*code != 0) {
    return absl::InternalError(
        absl::StrCat(absl::StrJoin(argv, " "), ": exit ", *code, ": ", out, err));
  }
  return out;
}

absl::StatusOr<std::string> BinDir() {
  static std::mutex mu;
  static absl::StatusOr<std::string> result = absl::UnknownError("not unpacked");
  std::lock_guard<std::mutex> lock(mu);
  if (result.ok()) return result;
  const std::string pack = PackDir();
  if (pack.empty()) return absl::NotFoundError("no ../shared/peers and no $PEERS_DIR");
  const std::string dir = BuildDir() + "/peers-bin";
  auto out = Run({"/usr/bin/flock", dir + ".lock", pack + "/unpack", dir});
  if (!out.ok()) {
    return absl::InternalError(
        absl::StrCat("unpacking the peers of ", pack, " into ", dir, ": ", out.status().message()));
  }
  result = dir;
  return result;
}

bool HasProgram(const std::string& name) { return Program(name).ok(); }

absl::StatusOr<std::string> Program(const std::string& name) {
  if (name == "etcd") {
    if (access("/usr/bin/etcd", X_OK) == 0) return std::string("/usr/bin/etcd");
    return absl::NotFoundError("etcd: not installed (Debian's etcd-server; scripts/setup has it)");
  }
  auto dir = BinDir();
  if (!dir.ok()) return dir.status();
  const std::string path = *dir + "/" + name;
  if (access(path.c_str(), X_OK) != 0) {
    return absl::NotFoundError(absl::StrCat(name, ": not among the peers of ", PackDir()));
  }
  return path;
}

std::string VersionOf(const std::string& name) {
  static std::mutex mu;
  static std::map<std::string, std::string> known;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = known.find(name); it != known.end()) return it->second;
  std::string version;
  if (auto path = Program(name); path.ok()) {
    auto out = Run({*path, "--version"});
    if (out.ok()) {
      // "Kubernetes v1.24.0-alpha.1", "/path/csi-attacher v4.8.1", "etcd Version: 3.4.23\n...".
      const std::string first = out->substr(0, out->find('\n'));
      std::vector<std::string> words = absl::StrSplit(first, ' ', absl::SkipEmpty());
      if (!words.empty()) version = words.back();
    }
  }
  known[name] = version;
  return version;
}

std::string MakeDir(const std::string& name) {
  std::string tmpl = absl::StrCat(fs::temp_directory_path().string(), "/peers-", name, "-XXXXXX");
  char* d = mkdtemp(tmpl.data());
  return d != nullptr ? std::string(d) : std::string();
}

void RemoveDir(const std::string& dir) {
  const auto* unit = ::testing::UnitTest::GetInstance();
  if (dir.empty() || (unit != nullptr && unit->failed_test_count() > 0)) return;
  if (const char* keep = std::getenv("PEERS_KEEP_LOGS"); keep != nullptr && *keep != '\0') return;
  std::error_code ec;
  fs::remove_all(dir, ec);
}

int Main(int argc, char** argv, const char* suite, const std::vector<std::string>& programs) {
  ::testing::InitGoogleTest(&argc, argv);
  if (PackDir().empty()) {
    std::printf(
        "%s: skipped: no real peers here (no ../shared/peers beside the source, no "
        "$PEERS_DIR)\n",
        suite);
    return kSkipped;
  }
  std::vector<std::string> ran;
  for (const std::string& p : programs) {
    auto path = Program(p);
    if (!path.ok()) {
      std::fprintf(stderr, "%s: %s\n", suite, std::string(path.status().message()).c_str());
      return 1;
    }
    ran.push_back(absl::StrCat(p, " ", VersionOf(p)));
  }
  std::printf("%s: against %s\n", suite, absl::StrJoin(ran, ", ").c_str());
  std::fflush(stdout);
  return RUN_ALL_TESTS();
}

}  // namespace ccm::peers
