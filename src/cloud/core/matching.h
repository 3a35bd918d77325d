#pragma once
// Node -> VM matching rules (REFERENCE.md "Node identity"), pure: the look-ups are injected.
// A Node with a providerID is matched by the providerID's UUID ONLY (the reference's InstancesV2
// does the same): no fallback, so a deleted VM's Node is found NotFound even when another VM now
// has its IP or hostname. A Node without providerID (not initialised yet): systemUUID converted
// from SMBIOS order, then as reported; the node name as guest hostname; the node name as an IP.
// Identifiers already tried are not retried.
// The first look-up that returns a VM decides; more than one distinct VM for one identifier is
// an error naming them (never a guess).

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cloud/core/node_identity.h"

namespace ccm::cloud {

struct VmRef {
  std::string vcenter;     // configured vCenter (label or address)
  std::string datacenter;  // datacenter name or path
  std::string moid;        // e.g. "vm-42"
  std::string uuid;        // BIOS UUID (summary.config.uuid)
  std::string name;        // VM name, for messages
  bool operator==(const VmRef&) const = default;
};
std::string DebugString(const VmRef& vm);  // "vm-42 (node-1) in vc1/dc1"

// A look-up across every configured vCenter and datacenter, in a deterministic order. Contract:
// an empty vector = every vCenter answered and none has a match; an error = at least one could
// not be asked (Unavailable, timeouts, auth failures...). A NotFound error from a look-up is
// treated as Unavailable: only an empty answer counts as "no such VM".
using VmLookup = std::function<absl::StatusOr<std::vector<VmRef>>(absl::string_view key)>;

struct VmLookups {
  VmLookup by_uuid;      // key: normalised BIOS UUID
  VmLookup by_hostname;  // key: node name (guest hostname)
  VmLookup by_ip;        // key: canonical IP text
};

enum class MatchMethod { kProviderId, kSystemUuid, kHostname, kIp };
absl::string_view MatchMethodName(MatchMethod m);  // "providerID", "systemUUID", ...

struct VmMatch {
  VmRef vm;
  MatchMethod method = MatchMethod::kProviderId;
  std::string key;  // the identifier that matched
};

// NotFound (listing every identifier tried) only when every look-up answered with no match.
// A look-up error is returned at once, code kept (NotFound mapped to Unavailable), with the
// identifier as context. Several VMs for one identifier: FailedPrecondition naming them.
// A providerID that is not a vSphere one is InvalidArgument at once: such a node is not ours, and
// must never be reported as gone.
absl::StatusOr<VmMatch> MatchNodeToVm(const NodeIdentity& node, const VmLookups& lookups);

}  // namespace ccm::cloud
