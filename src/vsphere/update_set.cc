#include "vsphere/update_set.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace ccm::vsphere {
namespace {

absl::string_view ElementName(pugi::xml_node n) { return LocalName(absl::string_view(n.name())); }

template <typename F>
void ForEachChild(pugi::xml_node n, absl::string_view name, F f) {
  for (const pugi::xml_node& c : Children(n, name)) f(c);
}

// First element below `n` (or `n` itself) with this local name, depth first.
pugi::xml_node Find(pugi::xml_node n, absl::string_view name) {
  if (n.type() == pugi::node_element && ElementName(n) == name) return n;
  for (pugi::xml_node c = n.first_child(); c; c = c.next_sibling()) {
    if (pugi::xml_node f = Find(c, name)) return f;
  }
  return {};
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

absl::StatusOr<ObjectUpdate> ParseObjectUpdate(pugi::xml_node n) {
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
  return u;
}

absl::StatusOr<FilterUpdate> ParseFilterUpdate(pugi::xml_node n) {
  FilterUpdate f;
  f.filter = Text(Child(n, "filter"));
  absl::Status st;
  ForEachChild(n, "objectSet", [&](pugi::xml_node o) {
    if (!st.ok()) return;
    auto u = ParseObjectUpdate(o);
    if (!u.ok()) {
      st = u.status();
      return;
    }
    f.objects.push_back(*std::move(u));
  });
  CCM_RETURN_IF_ERROR(st);
  ForEachChild(n, "missingSet", [&](pugi::xml_node m) {
    MissingObject mo;
    mo.obj = ParseMoref(Child(m, "obj"));
    ParseFault(Child(m, "fault"), &mo.fault_type, &mo.message);
    f.missing_objects.push_back(std::move(mo));
  });
  return f;
}

absl::StatusOr<UpdateSet> ParseReturnval(pugi::xml_node r) {
  UpdateSet set;
  set.has_updates = true;
  pugi::xml_node version = Child(r, "version");
  if (!version) return Malformed("UpdateSet without version");
  set.version = Text(version);
  set.truncated = Text(Child(r, "truncated")) == "true";
  absl::Status st;
  ForEachChild(r, "filterSet", [&](pugi::xml_node f) {
    if (!st.ok()) return;
    auto fu = ParseFilterUpdate(f);
    if (!fu.ok()) {
      st = fu.status();
      return;
    }
    set.filters.push_back(*std::move(fu));
  });
  CCM_RETURN_IF_ERROR(st);
  return set;
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

absl::StatusOr<UpdateSet> ParseUpdateSetNode(std::shared_ptr<const pugi::xml_document> doc,
                                             pugi::xml_node node) {
  absl::StatusOr<UpdateSet> set;
  if (node.type() == pugi::node_element && ElementName(node) == "returnval") {
    set = ParseReturnval(node);
  } else if (pugi::xml_node fault = Find(node, "Fault")) {
    return absl::UnavailableError(absl::StrCat("WaitForUpdatesEx fault: ",
                                               Text(Child(fault, "faultstring"))));
  } else if (pugi::xml_node resp = Find(node, "WaitForUpdatesExResponse")) {
    pugi::xml_node r = Child(resp, "returnval");
    set = r ? ParseReturnval(r) : UpdateSet{};
  } else {
    return Malformed("no WaitForUpdatesExResponse element");
  }
  if (set.ok()) set->doc = std::move(doc);
  return set;
}

absl::StatusOr<UpdateSet> ParseUpdateSet(const SoapResponse& response) {
  return ParseUpdateSetNode(response.doc, response.body);
}

absl::StatusOr<UpdateSet> ParseUpdateSet(absl::string_view xml) {
  auto doc = std::make_shared<pugi::xml_document>();
  pugi::xml_parse_result r = doc->load_buffer(xml.data(), xml.size());
  if (!r) {
    return Malformed(absl::StrCat("XML error at offset ", r.offset, ": ", r.description()));
  }
  return ParseUpdateSetNode(doc, doc->document_element());
}

}  // namespace ccm::vsphere
