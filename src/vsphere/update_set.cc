#include "vsphere/update_set.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "vsphere/soap.h"

namespace ccm::vsphere {
namespace {

template <typename F>
void ForEachChild(pugi::xml_node n, absl::string_view name, F f) {
  for (const pugi::xml_node& c : Children(n, name)) f(c);
}

std::string Text(pugi::xml_node n) { return n ? std::string(n.text().get()) : std::string(); }

absl::Status Malformed(absl::string_view what) {
  return absl::DataLossError(absl::StrCat("malformed WaitForUpdatesEx response: ", what));
}

absl::StatusOr<ObjectUpdateKind> ParseKind(absl::string_view s) {
  if (s == "enter") return ObjectUpdateKind::kEnter;
  if (s == "modify") return ObjectUpdateKind::kModify;
  if (s == "leave") return ObjectUpdateKind::kLeave;
  return Malformed(absl::StrCat("unknown object update kind \"", s, "\""));
}

absl::StatusOr<PropertyChangeOp> ParseOp(absl::string_view s) {
  if (s == "assign") return PropertyChangeOp::kAssign;
  if (s == "add") return PropertyChangeOp::kAdd;
  if (s == "remove") return PropertyChangeOp::kRemove;
  if (s == "indirectRemove") return PropertyChangeOp::kIndirectRemove;
  return Malformed(absl::StrCat("unknown property change op \"", s, "\""));
}

// <fault><fault xsi:type="X">...</fault><localizedMessage>m</localizedMessage></fault>
void ParseFault(pugi::xml_node fault, std::string* type, std::string* message) {
  if (!fault) return;
  pugi::xml_node inner = Child(fault, "fault");
  *type = XsiType(inner ? inner : fault);
  *message = Text(Child(fault, "localizedMessage"));
}

}  // namespace

absl::string_view ToString(ObjectUpdateKind k) {
  switch (k) {
    case ObjectUpdateKind::kEnter:
      return "enter";
    case ObjectUpdateKind::kModify:
      return "modify";
    case ObjectUpdateKind::kLeave:
      return "leave";
  }
  return "?";
}

absl::string_view ToString(PropertyChangeOp op) {
  switch (op) {
    case PropertyChangeOp::kAssign:
      return "assign";
    case PropertyChangeOp::kAdd:
      return "add";
    case PropertyChangeOp::kRemove:
      return "remove";
    case PropertyChangeOp::kIndirectRemove:
      return "indirectRemove";
  }
  return "?";
}

absl::StatusOr<ObjectUpdate> DecodeObjectSet(std::shared_ptr<const pugi::xml_document> doc) {
  pugi::xml_node n = doc->document_element();
  ObjectUpdate u;
  pugi::xml_node kind = Child(n, "kind");
  if (!kind) return Malformed("objectSet without kind");
  CCM_ASSIGN_OR_RETURN(u.kind, ParseKind(Text(kind)));
  u.obj = ParseMoref(Child(n, "obj"));
  if (u.obj.empty()) return Malformed("objectSet without obj");
  absl::Status st;
  ForEachChild(n, "changeSet", [&](pugi::xml_node c) {
    if (!st.ok()) return;
    PropertyChange pc;
    pc.name = Text(Child(c, "name"));
    pugi::xml_node op = Child(c, "op");
    if (pc.name.empty() || !op) {
      st = Malformed(absl::StrCat("changeSet of ", u.obj.value, " without name or op"));
      return;
    }
    auto parsed = ParseOp(Text(op));
    if (!parsed.ok()) {
      st = parsed.status();
      return;
    }
    pc.op = *parsed;
    pc.val = Child(c, "val");
    u.changes.push_back(std::move(pc));
  });
  CCM_RETURN_IF_ERROR(st);
  ForEachChild(n, "missingSet", [&](pugi::xml_node m) {
    MissingProperty mp;
    mp.path = Text(Child(m, "path"));
    ParseFault(Child(m, "fault"), &mp.fault_type, &mp.message);
    u.missing.push_back(std::move(mp));
  });
  u.doc = std::move(doc);
  return u;
}

MissingObject DecodeMissingObject(pugi::xml_node n) {
  MissingObject mo;
  mo.obj = ParseMoref(Child(n, "obj"));
  ParseFault(Child(n, "fault"), &mo.fault_type, &mo.message);
  return mo;
}

}  // namespace ccm::vsphere
