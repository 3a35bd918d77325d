#include "cloud/core/matching.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cloud/core/provider_id.h"
#include "cloud/core/uuid.h"
#include "common/ip.h"
#include "common/status_macros.h"

namespace ccm::cloud {

std::string DebugString(const VmRef& vm) {
  return absl::StrCat(vm.moid, " (", vm.name, ") in ", vm.vcenter, "/", vm.datacenter);
}

absl::string_view MatchMethodName(MatchMethod m) {
  switch (m) {
    case MatchMethod::kProviderId:
      return "providerID";
    case MatchMethod::kSystemUuid:
      return "systemUUID";
    case MatchMethod::kHostname:
      return "hostname";
    case MatchMethod::kIp:
      return "IP";
  }
  return "unknown";
}

namespace {

struct Attempt {
  MatchMethod method;
  const VmLookup* lookup;
  std::string key;
  std::string label;  // e.g. "uuid 4223... (from systemUUID)"
};

}  // namespace

absl::StatusOr<VmMatch> MatchNodeToVm(const NodeIdentity& node, const VmLookups& lookups) {
  std::vector<Attempt> attempts;
  std::vector<std::string> skipped;
  bool ids_from_node = true;  // systemUUID, hostname, IP: only for a Node without providerID
  auto add = [&](MatchMethod m, const VmLookup& l, std::string key, std::string label) {
    for (const Attempt& a : attempts)
      if (a.lookup == &l && a.key == key) return;  // already tried under another name
    attempts.push_back({m, &l, std::move(key), std::move(label)});
  };

  if (!absl::StripAsciiWhitespace(node.provider_id).empty()) {
    absl::StatusOr<std::string> uuid = ParseProviderId(node.provider_id);
    if (uuid.ok()) {
      // The providerID is the only key of an initialised Node (as in the reference's
      // InstancesV2): no fallback to systemUUID, hostname or IP, which another VM may have
      // taken over (a reused IP must not keep a deleted VM's Node alive or feed it addresses).
      add(MatchMethod::kProviderId, lookups.by_uuid, *uuid,
          absl::StrCat("uuid ", *uuid, " (providerID)"));
      ids_from_node = false;
    } else {
      // Not ours (or garbage): never look further and never report the VM as gone.
      return Annotate(uuid.status(), absl::StrCat("node ", node.name));
    }
  }
  if (ids_from_node && !absl::StripAsciiWhitespace(node.system_uuid).empty()) {
    absl::StatusOr<std::vector<std::string>> both = UuidBothByteOrders(node.system_uuid);
    if (both.ok()) {
      // Reference order: converted from SMBIOS order first, then as reported.
      std::reverse(both->begin(), both->end());
      for (std::string& u : *both) {
        std::string label = absl::StrCat("uuid ", u, " (systemUUID)");
        add(MatchMethod::kSystemUuid, lookups.by_uuid, std::move(u), std::move(label));
      }
    } else {
      skipped.push_back(absl::StrCat("systemUUID \"", node.system_uuid, "\" (not a UUID)"));
    }
  }
  const std::string name(absl::StripAsciiWhitespace(node.name));
  if (ids_from_node && !name.empty()) {
    add(MatchMethod::kHostname, lookups.by_hostname, name, absl::StrCat("hostname ", name));
    if (std::optional<IpAddress> ip = IpAddress::TryParse(name)) {
      add(MatchMethod::kIp, lookups.by_ip, ip->ToString(), absl::StrCat("IP ", ip->ToString()));
    }
  }

  std::vector<std::string> tried;
  for (const Attempt& a : attempts) {
    if (!*a.lookup) {
      return absl::InternalError(
          absl::StrCat("node ", node.name, ": no look-up for ", MatchMethodName(a.method)));
    }
    absl::StatusOr<std::vector<VmRef>> found = (*a.lookup)(a.key);
    if (!found.ok()) {
      absl::Status s = found.status();
      if (s.code() == absl::StatusCode::kNotFound) s = absl::UnavailableError(s.message());
      return Annotate(s, absl::StrCat("find VM of node ", node.name, " by ", a.label));
    }
    std::vector<VmRef> distinct;
    for (const VmRef& vm : *found) {
      if (std::none_of(distinct.begin(), distinct.end(), [&](const VmRef& d) {
            return d.vcenter == vm.vcenter && d.moid == vm.moid;
          })) {
        distinct.push_back(vm);
      }
    }
    if (distinct.size() == 1) return VmMatch{distinct.front(), a.method, a.key};
    if (distinct.size() > 1) {
      std::vector<std::string> names;
      for (const VmRef& vm : distinct) names.push_back(DebugString(vm));
      return absl::FailedPreconditionError(
          absl::StrCat("node ", node.name, ": ", distinct.size(), " VMs match ", a.label, ": ",
                       absl::StrJoin(names, ", "), "; refusing to guess"));
    }
    tried.push_back(a.label);
  }
  for (std::string& s : skipped) tried.push_back(std::move(s));
  return absl::NotFoundError(absl::StrCat(
      "no VM found for node ", node.name, " in any vCenter/datacenter; tried ",
      tried.empty() ? std::string("nothing (node has no name, providerID or systemUUID)")
                    : absl::StrJoin(tried, ", ")));
}

}  // namespace ccm::cloud
