#pragma once
// A TCP port on 127.0.0.1 that nothing listens on right now, for a child process to bind.

namespace ccm::testing {

// The port the kernel gave a socket bound to 127.0.0.1:0, closed again; 0 when none could be had.
int FreePort();

}  // namespace ccm::testing
