#pragma once
// The real programs of ../shared/peers (kube-apiserver, kube-controller-manager, the CSI sidecars,
// csi-sanity) for the peers suite: where they are, unpacking them (their SHA256SUMS checked by
// the folder's own `unpack`), their versions, and the suite's main(), which skips with one line
// when they are not on this machine. They are test tools: nothing of them is built into a binary
// we ship.

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace ccm::peers {

// The exit code of a suite that did not run (CTest's SKIP_RETURN_CODE for the peers tests).
inline constexpr int kSkipped = 77;

// The folder of the packed programs: $PEERS_DIR, else <source>/../shared/peers; "" when neither
// holds an `unpack` script.
std::string PackDir();

// The unpacked programs: <build>/peers-bin, made once for every suite of the build (a lock
// keeps two suites starting together from writing the same file). The error names the folder
// and the step that failed (a checksum, a missing program).
absl::StatusOr<std::string> BinDir();

// The path of an unpacked program ("kube-apiserver", "csi-provisioner-v5.2.0", ...), or an
// error naming it when this machine's peers do not have it.
absl::StatusOr<std::string> Program(const std::string& name);
bool HasProgram(const std::string& name);

// What a program says of its version ("v1.24.0-alpha.1"); "" when it says nothing.
std::string VersionOf(const std::string& name);

// The project's own build outputs and sources (CTest passes CCM_BINARY_DIR / CCM_SOURCE_DIR).
std::string BuildDir();
std::string SourceDir();

// A fresh directory /tmp/peers-<name>-XXXXXX; removed by RemoveDir unless the test failed or
// $PEERS_KEEP_LOGS is set (every process's log is in it).
std::string MakeDir(const std::string& name);
void RemoveDir(const std::string& dir);

// Runs a program to its end: its stdout (stderr appended when it fails), or an error with both.
absl::StatusOr<std::string> Run(const std::vector<std::string>& argv);

// The body of every peers suite's main(): runs the tests, or prints
// "<suite>: skipped: ..." and returns kSkipped when the programs are not here.
int Main(int argc, char** argv, const char* suite, const std::vector<std::string>& programs);

}  // namespace ccm::peers
