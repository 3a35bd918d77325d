#include "controllers/node_patch.h"

#include <string>
#include <utility>

#include "absl/strings/str_replace.h"
#include "absl/strings/string_view.h"
#include "cloud/core/node_labels.h"

namespace ccm::controllers {
namespace {

using nlohmann::json;

// The fields written with their own guards, under "metadata" and "spec".
struct Field {
  const char* parent;
  const char* name;
};
constexpr Field kMaps[] = {{"metadata", "labels"}, {"metadata", "annotations"}};
constexpr Field kProviderId = {"spec", "providerID"};
constexpr Field kTaints = {"spec", "taints"};

bool IsOwnField(absl::string_view parent, absl::string_view name) {
  if (parent == "metadata") return name == "labels" || name == "annotations";
  if (parent == "spec") return name == "providerID" || name == "taints";
  return false;
}

// The JSON pointer of `key` under `parent` ("~" and "/" escaped as RFC 6901 says).
std::string PointerOf(absl::string_view parent, absl::string_view key) {
  return std::string(parent) + "/" + absl::StrReplaceAll(key, {{"~", "~0"}, {"/", "~1"}});
}

json Op(absl::string_view op, const std::string& path) { return {{"op", op}, {"path", path}}; }
json Op(absl::string_view op, const std::string& path, const json& value) {
  return {{"op", op}, {"path", path}, {"value", value}};
}

// The labels the provider owns: written over whatever is there, as the reference does.
bool IsProviderLabel(absl::string_view key) {
  for (absl::string_view k :
       {cloud::kZoneLabel, cloud::kZoneBetaLabel, cloud::kRegionLabel, cloud::kRegionBetaLabel,
        cloud::kInstanceTypeLabel, cloud::kInstanceTypeBetaLabel}) {
    if (key == k) return true;
  }
  return false;
}

const json& Null() {
  static const json* n = new json();
  return *n;
}

// doc[parent][name], or null when either is absent.
const json& At(const json& doc, const Field& f) {
  auto p = doc.find(f.parent);
  if (p == doc.end() || !p->is_object()) return Null();
  auto v = p->find(f.name);
  return v == p->end() ? Null() : *v;
}

// Whether the two Nodes differ anywhere but in the fields written with their own guards (and
// metadata.resourceVersion). Compares in place: the Nodes are not copied.
bool RestDiffers(const json& before, const json& after) {
  for (const json* x : {&before, &after}) {
    const json& y = x == &before ? after : before;
    for (const auto& [key, value] : x->items()) {
      auto other = y.find(key);
      if (other == y.end()) return true;
      if ((key != "metadata" && key != "spec") || !value.is_object() || !other->is_object()) {
        if (value != *other) return true;
        continue;
      }
      for (const auto& [k, v] : value.items()) {
        if (IsOwnField(key, k) || (key == "metadata" && k == "resourceVersion")) continue;
        auto o = other->find(k);
        if (o == other->end() || *o != v) return true;
      }
    }
  }
  return false;
}

// The operations for the rest: a copy of both Nodes without the guarded fields, diffed.
json RestOps(json before, json after) {
  for (json* doc : {&before, &after}) {
    for (const char* parent : {"metadata", "spec"}) {
      auto p = doc->find(parent);
      for (auto it = p->begin(); it != p->end();) {
        if (IsOwnField(parent, it.key()) ||
            (absl::string_view(parent) == "metadata" && it.key() == "resourceVersion")) {
          it = p->erase(it);
        } else {
          ++it;
        }
      }
    }
  }
  return json::diff(before, after);
}

json VersionTest(const json& before) {
  const json& version = At(before, {"metadata", "resourceVersion"});
  return Op("test", "/metadata/resourceVersion", version.is_null() ? json("") : version);
}

bool HasParents(const json& node) {
  for (const char* parent : {"metadata", "spec"}) {
    auto p = node.find(parent);
    if (p == node.end() || !p->is_object()) return false;
  }
  return true;
}

// A Node without metadata or spec (never from the API server): the whole difference, behind the
// resourceVersion.
json GuardedWholeDiff(json before, json after) {
  const json test = VersionTest(before);
  for (json* doc : {&before, &after}) {
    auto m = doc->find("metadata");
    if (m != doc->end() && m->is_object()) m->erase("resourceVersion");
  }
  json ops = json::diff(before, after);
  if (!ops.empty()) ops.insert(ops.begin(), test);
  return ops;
}

// Builds the guarded operations (both Nodes have metadata and spec objects).
class PatchBuilder {
 public:
  PatchBuilder(const json& before, const json& after) : before_(before), after_(after) {}

  // A string map written key by key (metadata.labels, metadata.annotations).
  void Map(const Field& f) {
    const json &b = At(before_, f), &a = At(after_, f);
    if (b == a) return;
    const std::string path = std::string("/") + f.parent + "/" + f.name;
    if (!b.is_object() || !a.is_object()) return Whole(path, b, a, /*guard_with_test=*/false);
    // A key added that must not overwrite another writer's: the whole map as read, tested first.
    const bool labels = absl::string_view(f.name) == "labels";
    for (const auto& [k, v] : a.items()) {
      if (labels && !b.contains(k) && !IsProviderLabel(k)) {
        ops_.push_back(Op("test", path, b));
        break;
      }
    }
    for (const auto& [k, v] : b.items()) {
      if (a.contains(k)) continue;
      ops_.push_back(Op("test", PointerOf(path, k), v));
      ops_.push_back(Op("remove", PointerOf(path, k)));
    }
    for (const auto& [k, v] : a.items()) {
      auto old = b.find(k);
      if (old != b.end() && *old == v) continue;
      if (old != b.end()) ops_.push_back(Op("test", PointerOf(path, k), *old));
      ops_.push_back(Op("add", PointerOf(path, k), v));
    }
  }

  // A value written whole behind a test of its old value. `set_once`: the API server itself
  // refuses to change the value once set (spec.providerID), so setting it where it is absent
  // needs no guard.
  void Value(const Field& f, bool set_once = false) {
    const json &b = At(before_, f), &a = At(after_, f);
    if (b == a) return;
    const std::string path = std::string("/") + f.parent + "/" + f.name;
    if (set_once && b.is_null() && !a.is_null()) return ops_.push_back(Op("add", path, a));
    Whole(path, b, a, /*guard_with_test=*/true);
  }

  json Finish() && {
    if (RestDiffers(before_, after_)) {
      guard_version_ = true;
      for (json& op : RestOps(before_, after_)) ops_.push_back(std::move(op));
    }
    if (guard_version_) ops_.insert(ops_.begin(), VersionTest(before_));
    return std::move(ops_);
  }

 private:
  // Replaces the value at `path` whole. An existing old value is tested (when asked); an absent
  // one cannot be, so the resourceVersion guards the write.
  void Whole(const std::string& path, const json& b, const json& a, bool guard_with_test) {
    if (!b.is_null() && guard_with_test) {
      ops_.push_back(Op("test", path, b));
    } else {
      guard_version_ = true;
    }
    ops_.push_back(a.is_null() ? Op("remove", path) : Op("add", path, a));
  }

  const json& before_;
  const json& after_;
  json ops_ = json::array();
  bool guard_version_ = false;
};

}  // namespace

json NodeJsonPatch(const json& before, const json& after) {
  if (!HasParents(before) || !HasParents(after)) return GuardedWholeDiff(before, after);
  PatchBuilder b(before, after);
  for (const Field& f : kMaps) b.Map(f);
  b.Value(kProviderId, /*set_once=*/true);
  b.Value(kTaints);
  return std::move(b).Finish();
}

bool PatchTestsHold(const json& patch, const json& node) {
  if (!patch.is_array()) return true;
  for (const json& op : patch) {
    if (op.value("op", "") != "test") continue;
    const json::json_pointer ptr(op.value("path", ""));
    if (!node.contains(ptr) || node.at(ptr) != op["value"]) return false;
  }
  return true;
}

}  // namespace ccm::controllers
