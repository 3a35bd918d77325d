#pragma once
// mount(8)-style option lists ("ro,noatime,bind,discard") -> mount(2)'s flags and data string.
//
// We call mount(2) directly instead of running util-linux mount: the error is the kernel's errno
// (EROFS, EBUSY, ENOENT) rather than a parsed message, nothing depends on /etc/fstab, helpers or
// /run/mount/utab, and no process is forked per publish. The price is this table: the options
// mount(8) turns into flags, the userspace-only ones it drops, the rest passed to the filesystem.

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace ccm::csi::node {

struct MountFlags {
  unsigned long flags = 0;  // MS_RDONLY, MS_NOSUID, MS_BIND, ...
  std::string data;         // filesystem options, comma-separated ("nouuid,discard")
  bool bind = false;        // "bind" / "rbind" was asked
  bool read_only = false;   // "ro" won over "rw" (the last one given counts)
};

// Flags as mount(8) parses them: later options override earlier ones ("rw" after "ro"),
// "defaults" is a no-op, userspace-only options (auto, noauto, user, users, nouser, owner,
// group, nofail, _netdev, x-*, comment=*, loop*) are dropped, everything else is data.
MountFlags ParseMountOptions(const std::vector<std::string>& options);

// The flags that remounting a bind mount can change (MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC,
// atime flags). A first MS_BIND mount ignores them, so they need a second MS_REMOUNT call.
unsigned long PerMountFlags(unsigned long flags);

// NFS (fs types nfs, nfs4): the kernel's NFS client wants the server's address in the data
// ("addr=<ip>"); mount.nfs adds it after resolving the host of "<host>:/<path>", and so does
// this, with `resolve` (an IP literal, bracketed for IPv6, is used as it is). `data` is
// ParseMountOptions's; an addr= already there is kept. InvalidArgument for a source that is not
// "<host>:/<path>"; resolve's error names the host.
using HostResolver = std::function<absl::StatusOr<std::string>(const std::string& host)>;
absl::StatusOr<std::string> NfsMountData(const std::string& source, const std::string& data,
                                         const HostResolver& resolve);
bool IsNfsType(const std::string& fs_type);

}  // namespace ccm::csi::node
