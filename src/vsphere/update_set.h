#pragma once
// Typed view of a PropertyCollector.WaitForUpdatesEx answer (vim25 UpdateSet). Pure parsing: no
// I/O. Property values stay XML (`PropertyChange::val`) because only the consumer knows their
// type (VM facts apply them with ApplyVmProperty). Each ObjectUpdate owns the small document its
// values live in, so an ObjectUpdate (cheap to copy, shared) can be kept on its own.
//
// Answers are read by the streaming parser (update_stream.h), which hands on one ObjectUpdate
// at a time; the Decode* functions here turn one <objectSet> / <missingSet> into its type.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "pugixml.hpp"
#include "vsphere/moref.h"

namespace ccm::vsphere {

enum class ObjectUpdateKind { kEnter, kModify, kLeave };
enum class PropertyChangeOp { kAssign, kAdd, kRemove, kIndirectRemove };

absl::string_view ToString(ObjectUpdateKind k);
absl::string_view ToString(PropertyChangeOp op);

struct PropertyChange {
  std::string name;  // property path, e.g. "summary.runtime.powerState", "guest.net"
  PropertyChangeOp op = PropertyChangeOp::kAssign;
  pugi::xml_node val;  // the <val> element; null for remove / indirectRemove or unset values
};

// A property (or object) that could not be read, e.g. NotAuthenticated or ManagedObjectNotFound.
struct MissingProperty {
  std::string path;
  std::string fault_type;  // xsi:type of the fault, e.g. "ManagedObjectNotFound"
  std::string message;     // localizedMessage, may be empty
};

struct ObjectUpdate {
  ObjectUpdateKind kind = ObjectUpdateKind::kModify;
  Moref obj;  // {"VirtualMachine", "vm-42"}
  std::vector<PropertyChange> changes;
  std::vector<MissingProperty> missing;
  std::shared_ptr<const pugi::xml_document> doc;  // owns every PropertyChange::val
};

struct MissingObject {
  Moref obj;
  std::string fault_type;
  std::string message;
};

struct FilterUpdate {
  std::string filter;  // the PropertyFilter MOID
  std::vector<ObjectUpdate> objects;
  std::vector<MissingObject> missing_objects;
};

struct UpdateSet {
  // False when the call returned no UpdateSet (maxWaitSeconds passed without a change): then
  // the caller keeps its version and asks again.
  bool has_updates = false;
  std::string version;     // pass to the next WaitForUpdatesEx
  bool truncated = false;  // more updates are pending: ask again at once with `version`
  std::vector<FilterUpdate> filters;
};

// One <objectSet> (kind, obj, changeSet*, missingSet*): the root element of `doc`, which the
// result keeps alive.
absl::StatusOr<ObjectUpdate> DecodeObjectSet(std::shared_ptr<const pugi::xml_document> doc);
// One filter-level <missingSet> element (obj, fault).
MissingObject DecodeMissingObject(pugi::xml_node missing_set);

}  // namespace ccm::vsphere
