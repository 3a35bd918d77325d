#include "controllers/node_patch.h"

#include <string>
#include <utility>

#include "absl/strings/str_replace.h"
#include "absl/strings/string_view.h"

namespace ccm::controllers {
namespace {

using nlohmann::json;

// The JSON pointer of `key` under `parent` ("~" and "/" escaped as RFC 6901 says).
std::string PointerOf(absl::string_view parent, absl::string_view key) {
  return std::string(parent) + "/" + absl::StrReplaceAll(key, {{"~", "~0"}, {"/", "~1"}});
}

json Op(absl::string_view op, const std::string& path) { return {{"op", op}, {"path", path}}; }
json Op(absl::string_view op, const std::string& path, const json& value) {
  return {{"op", op}, {"path", path}, {"value", value}};
}

// Builds the guarded operations; `rest` keeps what the per-field rules did not cover.
class PatchBuilder {
 public:
  PatchBuilder(const json& before, const json& after) : rest_before_(before), rest_after_(after) {
    if (before.contains("metadata") && before["metadata"].is_object()) {
      version_ = before["metadata"].value("resourceVersion", json(""));
    }
  }

  // A string map written key by key (metadata.labels, metadata.annotations).
  void Map(const char* parent, const char* field) {
    if (!Handled(parent)) return;
    const json b = Take(rest_before_, parent, field), a = Take(rest_after_, parent, field);
    if (b == a) return;
    const std::string path = std::string("/") + parent + "/" + field;
    if (!b.is_object() || !a.is_object()) return Whole(path, b, a, /*guard_with_test=*/false);
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
  void Value(const char* parent, const char* field, bool set_once = false) {
    if (!Handled(parent)) return;
    const json b = Take(rest_before_, parent, field), a = Take(rest_after_, parent, field);
    if (b == a) return;
    const std::string path = std::string("/") + parent + "/" + field;
    if (set_once && b.is_null() && !a.is_null()) return ops_.push_back(Op("add", path, a));
    Whole(path, b, a, /*guard_with_test=*/true);
  }

  json Finish() && {
    rest_before_["metadata"].erase("resourceVersion");
    rest_after_["metadata"].erase("resourceVersion");
    for (json& op : json::diff(rest_before_, rest_after_)) {
      guard_version_ = true;
      ops_.push_back(std::move(op));
    }
    if (guard_version_)
      ops_.insert(ops_.begin(), Op("test", "/metadata/resourceVersion", version_));
    return std::move(ops_);
  }

 private:
  // Per-field rules apply when both sides have the parent object; otherwise the whole
  // difference goes to the resourceVersion-guarded rest.
  bool Handled(const char* parent) const {
    return rest_before_.contains(parent) && rest_before_[parent].is_object() &&
           rest_after_.contains(parent) && rest_after_[parent].is_object();
  }

  static json Take(json& doc, const char* parent, const char* field) {
    json& p = doc[parent];
    auto it = p.find(field);
    if (it == p.end()) return nullptr;
    json out = std::move(*it);
    p.erase(it);
    return out;
  }

  // Replaces the value at `path` whole. An existing old value is tested (when asked); an absent
  // one cannot be, so the resourceVersion guards the write.
  void Whole(const std::string& path, const json& b, const json& a, bool guard_with_test) {
    if (!b.is_null() && guard_with_test) {
      ops_.push_back(Op("test", path, b));
    } else {
      guard_version_ = true;
    }
    if (a.is_null()) {
      ops_.push_back(Op("remove", path));
    } else {
      ops_.push_back(Op("add", path, a));
    }
  }

  json rest_before_, rest_after_;
  json version_ = "";
  json ops_ = json::array();
  bool guard_version_ = false;
};

}  // namespace

json NodeJsonPatch(const json& before, const json& after) {
  PatchBuilder b(before, after);
  b.Map("metadata", "labels");
  b.Map("metadata", "annotations");
  b.Value("spec", "providerID", /*set_once=*/true);
  b.Value("spec", "taints");
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
