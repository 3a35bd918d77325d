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
};

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
//  - the winning object carries several tags of the category: names the object and the tags.
absl::StatusOr<std::optional<ZoneRegion>> ResolveZoneRegion(
    const std::vector<AncestorChain>& chains, absl::string_view zone_category,
    absl::string_view region_category);

}  // namespace ccm::cloud
