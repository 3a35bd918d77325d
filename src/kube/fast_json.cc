#include "kube/fast_json.h"

#include <simdjson.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "kube/object_scan.h"

namespace ccm::kube {
namespace {

using Json = nlohmann::json;
namespace dom = simdjson::dom;

// One parser per thread, reused: its buffers grow to the biggest document taken and stay.
dom::parser& Parser() {
  thread_local dom::parser parser(kFastJsonMaxBytes);
  return parser;
}

// The document's root, or nullopt when simdjson does not take it.
std::optional<dom::element> Root(absl::string_view body) {
  if (body.size() > kFastJsonMaxBytes) return std::nullopt;
  dom::element root;
  if (Parser().parse(body.data(), body.size()).get(root) != simdjson::SUCCESS) return std::nullopt;
  return root;
}

void Build(dom::element el, Json& out);

void BuildObject(dom::object obj, Json& out) {
  out = Json::object();
  for (dom::key_value_pair kv : obj) Build(kv.value, out[std::string(kv.key)]);
}

// As nlohmann's parser builds a value: a non-negative integer is unsigned, a negative one signed.
void Build(dom::element el, Json& out) {
  switch (el.type()) {
    case dom::element_type::OBJECT:
      BuildObject(el.get_object().value_unsafe(), out);
      return;
    case dom::element_type::ARRAY: {
      out = Json::array();
      Json::array_t& arr = out.get_ref<Json::array_t&>();
      const dom::array items = el.get_array().value_unsafe();  // a copy: the result is temporary
      for (dom::element item : items) Build(item, arr.emplace_back());
      return;
    }
    case dom::element_type::INT64: {
      const int64_t v = el.get_int64().value_unsafe();
      if (v >= 0) {
        out = static_cast<uint64_t>(v);
      } else {
        out = v;
      }
      return;
    }
    case dom::element_type::UINT64:
      out = el.get_uint64().value_unsafe();
      return;
    case dom::element_type::DOUBLE:
      out = el.get_double().value_unsafe();
      return;
    case dom::element_type::STRING:
      out = std::string(el.get_string().value_unsafe());
      return;
    case dom::element_type::BOOL:
      out = el.get_bool().value_unsafe();
      return;
    case dom::element_type::NULL_VALUE:
      out = nullptr;
      return;
  }
}

// ParsePruned's walk (object_scan.cc) over an indexed document: the same members kept, and the
// same stop once a `last` chain's kept members are read.
class PrunedBuilder {
 public:
  // `obj` under `rule` (null: everything kept) into `out`; `chain_last`: nothing after this
  // object is needed once its ruled members are read.
  void Object(dom::object obj, const KeepRule* rule, bool chain_last, Json& out) {
    out = Json::object();
    if (rule == nullptr) {
      BuildObject(obj, out);
      return;
    }
    size_t needed = 0;
    for (const KeepRule& m : rule->members) needed += m.drop ? 0 : 1;
    size_t kept_read = 0;
    for (dom::key_value_pair kv : obj) {
      const KeepRule* r = KeepRule::Member(rule, kv.key);
      if (chain_last && kept_read == needed &&
          (rule->only || (r != nullptr && r->drop && r->last))) {
        stopped_ = true;
        return;
      }
      if ((r == nullptr && rule->only) || (r != nullptr && r->drop)) continue;
      if (r != nullptr) ++kept_read;
      Json& slot = out[std::string(kv.key)];
      if (kv.value.type() == dom::element_type::ARRAY && r != nullptr) {
        Array(kv.value.get_array().value_unsafe(), r, slot);
        continue;
      }
      if (kv.value.type() != dom::element_type::OBJECT) {
        Build(kv.value, slot);
        continue;
      }
      const bool child_last = chain_last && kept_read == needed && r != nullptr && r->last;
      Object(kv.value.get_object().value_unsafe(), r, child_last, slot);
      if (stopped_) return;
    }
  }

  // A ruled member's array: `rule` applies to each object in it; anything else is kept whole.
  void Array(dom::array items, const KeepRule* rule, Json& out) {
    out = Json::array();
    Json::array_t& arr = out.get_ref<Json::array_t&>();
    for (dom::element item : items) {
      if (item.type() == dom::element_type::OBJECT) {
        Object(item.get_object().value_unsafe(), rule, /*chain_last=*/false, arr.emplace_back());
      } else {
        Build(item, arr.emplace_back());
      }
    }
  }

 private:
  bool stopped_ = false;
};

}  // namespace

std::optional<Json> FastParse(absl::string_view body) {
  std::optional<dom::element> root = Root(body);
  if (!root) return std::nullopt;
  Json out;
  Build(*root, out);
  return out;
}

std::optional<Json> FastParsePruned(absl::string_view body, const KeepRule& rule) {
  std::optional<dom::element> root = Root(body);
  if (!root || root->type() != dom::element_type::OBJECT) return std::nullopt;
  Json out;
  PrunedBuilder().Object(root->get_object().value_unsafe(), &rule, /*chain_last=*/true, out);
  return out;
}

std::optional<Json> FastScanMetadata(absl::string_view body) {
  std::optional<dom::element> root = Root(body);
  if (!root || root->type() != dom::element_type::OBJECT) return std::nullopt;
  const dom::object top_members = root->get_object().value_unsafe();
  for (dom::key_value_pair top : top_members) {
    if (top.key != "metadata" || top.value.type() != dom::element_type::OBJECT) continue;
    Json meta = Json::object();
    const dom::object members = top.value.get_object().value_unsafe();
    for (dom::key_value_pair kv : members) {
      if (kv.value.type() != dom::element_type::STRING) continue;
      if (kv.key == "name" || kv.key == "namespace" || kv.key == "uid" ||
          kv.key == "resourceVersion") {
        meta[std::string(kv.key)] = std::string(kv.value.get_string().value_unsafe());
      }
    }
    return Json{{"metadata", std::move(meta)}};
  }
  return std::nullopt;
}

}  // namespace ccm::kube
