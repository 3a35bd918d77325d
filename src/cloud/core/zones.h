#pragma once
// Zone and region from vSphere tags (REFERENCE.md "Labels"): the tag whose category is the
// configured zone (region) category, on the nearest object of the VM's host chain (host, cluster,
// folders, datacenter), then its resource-pool chain, then its VM chain (VM, folders, ...).
// The I/O side fetches every ancestor's tags in one batch call and hands them here.

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ccm::cloud {

struct AttachedTag {
  std::string name;      // tag name, e.g. "zone-a"
  std::string category;  // its category's name, e.g. "k8s-zone"
};

struct TaggedObject {
  std::string description;  // for messages, e.g. "HostSystem host-42 (esx1.lab)"
  std::vector<AttachedTag> tags;
  std::string path;  // inventory path, e.g. "/dc1/host/cl1/esx1.lab"; empty when unknown
};

// The inventory paths ("/dc1/host/cl1/esx1") of a chain's objects, from their names nearest
// first. `last_is_root`: the last name is the root folder, which is not part of a path. `base`:
// the path the farthest object sits under when the chain does not reach the root (a resource
// pool chain stops below its compute resource). A "/" in a name is escaped as "%2f", as vSphere
// does in inventory paths.
std::vector<std::string> InventoryPaths(const std::vector<std::string>& names_nearest_first,
                                        bool last_is_root, absl::string_view base = "");

// Nearest first: chain[0] is the host (resp. resource pool, VM) itself.
using AncestorChain = std::vector<TaggedObject>;

struct ZoneRegion {
  std::string zone;
  std::string region;
  bool operator==(const ZoneRegion&) const = default;
};

// nullopt (no labels, no error) unless both categories are configured. Per category the first
// object, in chain order and then ancestor order, carrying a tag of that category wins (nearest
// ancestor wins; the reference took whatever it met first). Category names compare exactly.
// Errors (FailedPrecondition, never NotFound, which would mean "VM gone"):
//  - no object carries a tag of a category: names the category and every object searched;
//  - the winning object carries several tags of the category: names the object (type, MOID,
//    name and inventory path), the category and every such tag. The reference silently takes the
//    last tag it lists; we refuse rather than guess, and the message says so (it reaches the
//    InitializationFailed Event and the log).
absl::StatusOr<std::optional<ZoneRegion>> ResolveZoneRegion(
    const std::vector<AncestorChain>& chains, absl::string_view zone_category,
    absl::string_view region_category);

}  // namespace ccm::cloud
