#pragma once
// Typed view of a PropertyCollector.WaitForUpdatesEx answer (vim25 UpdateSet). Pure parsing: no
// I/O. Property values stay XML (`PropertyChange::val`) because only the consumer knows their
// type (VM facts apply them with ApplyVmProperty); the parsed document is kept alive by the
// UpdateSet that owns them, so copy the UpdateSet (cheap, shared) to keep a value around.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "pugixml.hpp"
#include "vsphere/moref.h"
#include "vsphere/soap.h"

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
  std::string version;  // pass to the next WaitForUpdatesEx
  bool truncated = false;  // more updates are pending: ask again at once with `version`
  std::vector<FilterUpdate> filters;
  std::shared_ptr<const pugi::xml_document> doc;  // owns every PropertyChange::val
};

// Parses a WaitForUpdatesEx answer: a whole SOAP envelope, a <WaitForUpdatesExResponse> element
// or a bare <returnval>. Malformed or truncated XML, a SOAP fault, missing required fields or
// unknown enum values are errors (DataLoss for broken documents, with a message saying where).
absl::StatusOr<UpdateSet> ParseUpdateSet(absl::string_view xml);

// Same, for an answer of Client::Call("WaitForUpdatesEx", ...).
absl::StatusOr<UpdateSet> ParseUpdateSet(const SoapResponse& response);

// Same, for an already parsed document; `node` is the response element, its returnval or any
// ancestor (e.g. the Body). `doc` must own `node` and is kept alive by the result.
absl::StatusOr<UpdateSet> ParseUpdateSetNode(std::shared_ptr<const pugi::xml_document> doc,
                                             pugi::xml_node node);

}  // namespace ccm::vsphere
