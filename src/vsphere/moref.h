#pragma once
// ManagedObjectReference: the (type, value) pair naming a vCenter object, e.g.
// {"VirtualMachine", "vm-42"}. Values are only unique per type, so both are always kept.

#include <string>
#include <tuple>

#include "absl/strings/str_cat.h"

namespace ccm::vsphere {

struct ManagedObjectReference {
  std::string type;
  std::string value;

  bool empty() const { return value.empty(); }
  // "VirtualMachine:vm-42" (the form vsphere.conf uses for datacenter MOIDs).
  std::string ToString() const { return absl::StrCat(type, ":", value); }
  bool operator==(const ManagedObjectReference& o) const {
    return type == o.type && value == o.value;
  }
  bool operator<(const ManagedObjectReference& o) const {
    return std::tie(type, value) < std::tie(o.type, o.value);
  }
  template <typename H>
  friend H AbslHashValue(H h, const ManagedObjectReference& m) {
    return H::combine(std::move(h), m.type, m.value);
  }
};

using Moref = ManagedObjectReference;

}  // namespace ccm::vsphere
