#include "csi/node/mount_options.h"

#include <arpa/inet.h>
#include <sys/mount.h>

#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace ccm::csi::node {
namespace {

struct FlagRule {
  unsigned long set;    // flags this option sets
  unsigned long clear;  // flags it clears
};

const std::map<std::string, FlagRule>& FlagTable() {
  static const auto* table = new std::map<std::string, FlagRule>{
      {"ro", {MS_RDONLY, 0}},
      {"rw", {0, MS_RDONLY}},
      {"nosuid", {MS_NOSUID, 0}},
      {"suid", {0, MS_NOSUID}},
      {"nodev", {MS_NODEV, 0}},
      {"dev", {0, MS_NODEV}},
      {"noexec", {MS_NOEXEC, 0}},
      {"exec", {0, MS_NOEXEC}},
      {"sync", {MS_SYNCHRONOUS, 0}},
      {"async", {0, MS_SYNCHRONOUS}},
      {"dirsync", {MS_DIRSYNC, 0}},
      {"noatime", {MS_NOATIME, 0}},
      {"atime", {0, MS_NOATIME}},
      {"nodiratime", {MS_NODIRATIME, 0}},
      {"diratime", {0, MS_NODIRATIME}},
      {"relatime", {MS_RELATIME, MS_STRICTATIME}},
      {"norelatime", {0, MS_RELATIME}},
      {"strictatime", {MS_STRICTATIME, MS_RELATIME}},
      {"lazytime", {MS_LAZYTIME, 0}},
      {"nolazytime", {0, MS_LAZYTIME}},
      {"mand", {MS_MANDLOCK, 0}},
      {"nomand", {0, MS_MANDLOCK}},
      {"silent", {MS_SILENT, 0}},
      {"loud", {0, MS_SILENT}},
      {"bind", {MS_BIND, 0}},
      {"rbind", {MS_BIND | MS_REC, 0}},
      {"defaults", {0, 0}},
  };
  return *table;
}

bool UserspaceOnly(const std::string& o) {
  static const char* const kDropped[] = {"auto",  "noauto", "user",   "users",  "nouser",
                                         "owner", "group",  "nofail", "_netdev"};
  for (const char* d : kDropped) {
    if (o == d) return true;
  }
  return absl::StartsWith(o, "x-") || absl::StartsWith(o, "comment=") ||
         absl::StartsWith(o, "loop");
}

}  // namespace

MountFlags ParseMountOptions(const std::vector<std::string>& options) {
  MountFlags out;
  std::vector<std::string> data;
  for (const std::string& o : options) {
    if (o.empty() || UserspaceOnly(o)) continue;
    auto it = FlagTable().find(o);
    if (it == FlagTable().end()) {
      data.push_back(o);
      continue;
    }
    out.flags = (out.flags & ~it->second.clear) | it->second.set;
  }
  out.data = absl::StrJoin(data, ",");
  out.bind = (out.flags & MS_BIND) != 0;
  out.read_only = (out.flags & MS_RDONLY) != 0;
  return out;
}

unsigned long PerMountFlags(unsigned long flags) {
  return flags & (MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_NOATIME | MS_NODIRATIME |
                  MS_RELATIME | MS_STRICTATIME);
}

bool IsNfsType(const std::string& fs_type) { return fs_type == "nfs" || fs_type == "nfs4"; }

namespace {
bool IsIpLiteral(const std::string& host) {
  unsigned char buf[16];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}
}  // namespace

absl::StatusOr<std::string> NfsMountData(const std::string& source, const std::string& data,
                                         const HostResolver& resolve) {
  const size_t sep = source.rfind(":/");
  if (sep == std::string::npos || sep == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("NFS source \"", source, "\" is not of the form <host>:/<path>"));
  }
  std::string host = source.substr(0, sep);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  for (absl::string_view opt : absl::StrSplit(data, ',', absl::SkipEmpty())) {
    if (absl::StartsWith(opt, "addr=")) return data;
  }
  std::string addr = host;
  if (!IsIpLiteral(host)) {
    absl::StatusOr<std::string> resolved = resolve(host);
    if (!resolved.ok()) return resolved.status();
    addr = *resolved;
  }
  return data.empty() ? absl::StrCat("addr=", addr) : absl::StrCat(data, ",addr=", addr);
}

}  // namespace ccm::csi::node
