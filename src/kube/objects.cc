#include "kube/objects.h"

#include <algorithm>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace ccm::kube {
namespace {

const Json* Find(const Json& obj, std::initializer_list<const char*> path) {
  const Json* cur = &obj;
  for (const char* p : path) {
    if (!cur->is_object()) return nullptr;
    auto it = cur->find(p);
    if (it == cur->end()) return nullptr;
    cur = &*it;
  }
  return cur;
}

std::string Str(const Json& obj, std::initializer_list<const char*> path) {
  const Json* j = Find(obj, path);
  return j != nullptr && j->is_string() ? j->get<std::string>() : "";
}

int64_t Int(const Json& obj, std::initializer_list<const char*> path) {
  const Json* j = Find(obj, path);
  return j != nullptr && j->is_number_integer() ? j->get<int64_t>() : 0;
}

std::map<std::string, std::string> StringMap(const Json& obj,
                                             std::initializer_list<const char*> path) {
  std::map<std::string, std::string> out;
  const Json* j = Find(obj, path);
  if (j == nullptr || !j->is_object()) return out;
  for (auto it = j->begin(); it != j->end(); ++it) {
    if (it->is_string()) out[it.key()] = it->get<std::string>();
  }
  return out;
}

Json& Obj(Json& parent, const char* key) {
  Json& j = parent[key];
  if (!j.is_object()) j = Json::object();
  return j;
}

}  // namespace

std::string Name(const Json& obj) { return Str(obj, {"metadata", "name"}); }
std::string Namespace(const Json& obj) { return Str(obj, {"metadata", "namespace"}); }
std::string Uid(const Json& obj) { return Str(obj, {"metadata", "uid"}); }
std::string ResourceVersion(const Json& obj) { return Str(obj, {"metadata", "resourceVersion"}); }
std::string ObjectKey(const Json& obj) {
  std::string ns = Namespace(obj);
  return ns.empty() ? Name(obj) : absl::StrCat(ns, "/", Name(obj));
}
std::map<std::string, std::string> Labels(const Json& obj) {
  return StringMap(obj, {"metadata", "labels"});
}
std::map<std::string, std::string> Annotations(const Json& obj) {
  return StringMap(obj, {"metadata", "annotations"});
}
std::optional<std::string> Label(const Json& obj, absl::string_view key) {
  const Json* j = Find(obj, {"metadata", "labels"});
  if (j == nullptr || !j->is_object()) return std::nullopt;
  auto it = j->find(std::string(key));
  if (it == j->end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}
std::optional<std::string> Annotation(const Json& obj, absl::string_view key) {
  const Json* j = Find(obj, {"metadata", "annotations"});
  if (j == nullptr || !j->is_object()) return std::nullopt;
  auto it = j->find(std::string(key));
  if (it == j->end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}
void SetLabel(Json& obj, absl::string_view key, absl::string_view value) {
  Obj(Obj(obj, "metadata"), "labels")[std::string(key)] = std::string(value);
}
void SetAnnotation(Json& obj, absl::string_view key, absl::string_view value) {
  Obj(Obj(obj, "metadata"), "annotations")[std::string(key)] = std::string(value);
}

std::vector<Taint> Taints(const Json& node) {
  std::vector<Taint> out;
  const Json* j = Find(node, {"spec", "taints"});
  if (j == nullptr || !j->is_array()) return out;
  for (const auto& t : *j) {
    if (!t.is_object()) continue;
    out.push_back({t.value("key", ""), t.value("value", ""), t.value("effect", "")});
  }
  return out;
}

bool HasTaint(const Json& node, absl::string_view key, absl::string_view effect) {
  for (const Taint& t : Taints(node)) {
    if (t.key == key && (effect.empty() || t.effect == effect)) return true;
  }
  return false;
}

bool AddTaint(Json& node, const Taint& t) {
  if (HasTaint(node, t.key, t.effect)) return false;
  Json& taints = Obj(node, "spec")["taints"];
  if (!taints.is_array()) taints = Json::array();
  Json entry = {{"key", t.key}, {"effect", t.effect}};
  if (!t.value.empty()) entry["value"] = t.value;
  taints.push_back(std::move(entry));
  return true;
}

bool RemoveTaint(Json& node, absl::string_view key, absl::string_view effect) {
  auto spec = node.find("spec");
  if (spec == node.end() || !spec->is_object()) return false;
  auto taints = spec->find("taints");
  if (taints == spec->end() || !taints->is_array()) return false;
  Json kept = Json::array();
  for (auto& t : *taints) {
    bool match = t.is_object() && t.value("key", "") == key &&
                 (effect.empty() || t.value("effect", "") == effect);
    if (!match) kept.push_back(t);
  }
  if (kept.size() == taints->size()) return false;
  *taints = std::move(kept);
  return true;
}

std::string ProviderId(const Json& node) { return Str(node, {"spec", "providerID"}); }
void SetProviderId(Json& node, absl::string_view id) {
  Obj(node, "spec")["providerID"] = std::string(id);
}

std::vector<NodeAddress> NodeAddresses(const Json& node) {
  std::vector<NodeAddress> out;
  const Json* j = Find(node, {"status", "addresses"});
  if (j == nullptr || !j->is_array()) return out;
  for (const auto& a : *j) {
    if (a.is_object()) out.push_back({a.value("type", ""), a.value("address", "")});
  }
  return out;
}

void SetNodeAddresses(Json& node, const std::vector<NodeAddress>& addresses) {
  Json arr = Json::array();
  for (const auto& a : addresses) arr.push_back({{"type", a.type}, {"address", a.address}});
  Obj(node, "status")["addresses"] = std::move(arr);
}

std::optional<std::string> NodeConditionStatus(const Json& node, absl::string_view type) {
  const Json* j = Find(node, {"status", "conditions"});
  if (j == nullptr || !j->is_array()) return std::nullopt;
  for (const auto& c : *j) {
    if (c.is_object() && c.value("type", "") == type) return c.value("status", "");
  }
  return std::nullopt;
}

bool IsNodeReady(const Json& node) { return NodeConditionStatus(node, "Ready") == "True"; }
std::string SystemUuid(const Json& node) { return Str(node, {"status", "nodeInfo", "systemUUID"}); }

void TrimNodeForCache(Json& node) {
  if (!node.is_object()) return;
  if (auto m = node.find("metadata"); m != node.end() && m->is_object()) m->erase("managedFields");
  auto st = node.find("status");
  if (st == node.end() || !st->is_object()) return;
  Json kept = Json::object();
  if (auto it = st->find("addresses"); it != st->end()) kept["addresses"] = std::move(*it);
  if (auto it = st->find("conditions"); it != st->end()) {
    kept["conditions"] = std::move(*it);
    if (kept["conditions"].is_array()) {
      for (Json& c : kept["conditions"]) {
        if (!c.is_object()) continue;
        Json brief = Json::object();
        for (const char* k : {"type", "status"}) {
          if (auto f = c.find(k); f != c.end()) brief[k] = std::move(*f);
        }
        c = std::move(brief);
      }
    }
  }
  if (auto info = st->find("nodeInfo"); info != st->end() && info->is_object()) {
    if (auto uuid = info->find("systemUUID"); uuid != info->end()) {
      kept["nodeInfo"]["systemUUID"] = std::move(*uuid);
    }
  }
  *st = std::move(kept);
}

const KeepRule& NodeCacheRule() {
  static const KeepRule* const kRule = new KeepRule{
      .members = {
          {.key = "metadata", .members = {{.key = "managedFields", .drop = true}}},
          {.key = "status",
           .only = true,
           .members = {{.key = "addresses"},
                       {.key = "conditions",
                        .only = true,
                        .members = {{.key = "type"}, {.key = "status"}}},
                       {.key = "nodeInfo", .only = true, .members = {{.key = "systemUUID"}}}},
           .last = true},
      }};
  return *kRule;
}

absl::StatusOr<std::map<std::string, std::string>> SecretData(const Json& secret) {
  std::map<std::string, std::string> out;
  if (const Json* d = Find(secret, {"data"}); d != nullptr && d->is_object()) {
    for (auto it = d->begin(); it != d->end(); ++it) {
      if (!it->is_string()) continue;
      auto v = Base64Decode(it->get<std::string>());
      if (!v) {
        return absl::InvalidArgumentError(
            absl::StrCat("secret ", ObjectKey(secret), ": data[", it.key(), "]: invalid base64"));
      }
      out[it.key()] = std::move(*v);
    }
  }
  for (auto& [k, v] : StringMap(secret, {"stringData"})) out[k] = v;
  return out;
}

LeaseSpec GetLeaseSpec(const Json& lease) {
  LeaseSpec s;
  s.holder_identity = Str(lease, {"spec", "holderIdentity"});
  s.lease_duration_seconds = Int(lease, {"spec", "leaseDurationSeconds"});
  s.acquire_time = Str(lease, {"spec", "acquireTime"});
  s.renew_time = Str(lease, {"spec", "renewTime"});
  s.lease_transitions = Int(lease, {"spec", "leaseTransitions"});
  return s;
}

void SetLeaseSpec(Json& lease, const LeaseSpec& s) {
  Json& spec = Obj(lease, "spec");
  spec["holderIdentity"] = s.holder_identity;
  spec["leaseDurationSeconds"] = s.lease_duration_seconds;
  if (!s.acquire_time.empty()) spec["acquireTime"] = s.acquire_time;
  if (!s.renew_time.empty()) spec["renewTime"] = s.renew_time;
  spec["leaseTransitions"] = s.lease_transitions;
}

EventInfo GetEventInfo(const Json& e) {
  EventInfo i;
  i.type = Str(e, {"type"});
  i.reason = Str(e, {"reason"});
  i.message = Str(e, {"message"});
  i.count = static_cast<int32_t>(Int(e, {"count"}));
  i.involved_kind = Str(e, {"involvedObject", "kind"});
  i.involved_name = Str(e, {"involvedObject", "name"});
  i.involved_namespace = Str(e, {"involvedObject", "namespace"});
  i.involved_uid = Str(e, {"involvedObject", "uid"});
  return i;
}

std::string Base64Encode(absl::string_view in) { return absl::Base64Escape(in); }

std::optional<std::string> Base64Decode(absl::string_view in) {
  // absl accepts unpadded input too; Kubernetes always pads, so require a multiple of 4.
  if (in.size() % 4 != 0) return std::nullopt;
  std::string out;
  if (!absl::Base64Unescape(in, &out)) return std::nullopt;
  return out;
}

}  // namespace ccm::kube
