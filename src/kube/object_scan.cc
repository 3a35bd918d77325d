#include "kube/object_scan.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kube/fast_json.h"

namespace ccm::kube {
namespace {

using Json = nlohmann::json;

// nlohmann's SAX interface: builds the object as its own parser would, except the members the
// rules do not keep, and stops when a `last` chain's kept members are read.
class PruningSax {
 public:
  explicit PruningSax(const KeepRule& rule) : root_rule_(rule) {}

  bool null() { return Value(nullptr); }
  bool boolean(bool b) { return Value(b); }
  bool number_integer(Json::number_integer_t v) { return Value(v); }
  bool number_unsigned(Json::number_unsigned_t v) { return Value(v); }
  bool number_float(Json::number_float_t v, const std::string&) { return Value(v); }
  bool binary(Json::binary_t& b) { return Value(Json::binary(std::move(b))); }
  bool string(std::string& s) { return Value(std::move(s)); }
  bool start_object(std::size_t) { return Open(Json::object()); }
  bool start_array(std::size_t) { return Open(Json::array()); }
  bool end_object() { return Close(); }
  bool end_array() { return Close(); }
  bool key(std::string& k);
  bool parse_error(std::size_t pos, const std::string&, const nlohmann::detail::exception& e) {
    error_ = absl::StrCat("malformed JSON at byte ", pos, ": ", e.what());
    return false;
  }

  bool complete() const { return stopped_ || (closed_ && error_.empty()); }
  const std::string& error() const { return error_; }
  Json& root() { return root_; }

 private:
  struct Frame {
    Json* node = nullptr;
    const KeepRule* rule = nullptr;          // null: everything below is kept
    const KeepRule* element_rule = nullptr;  // an array's: the rule of each object in it
    size_t kept_read = 0;                    // members with a rule, not dropped, read so far
    size_t needed = 0;                       // members with a rule, not dropped
    bool chain_last = false;                 // nothing after this object is needed
  };
  Json* Place(Json v);
  bool Value(Json v) {
    if (skip_ > 0) return true;
    if (skip_next_) {
      skip_next_ = false;
      return true;
    }
    Place(std::move(v));
    return true;
  }
  bool Open(Json container);
  bool Close() {
    if (skip_ > 0) {
      --skip_;
      return true;
    }
    open_.pop_back();
    closed_ = open_.empty();
    return true;
  }

  const KeepRule& root_rule_;
  Json root_;
  std::vector<Frame> open_;  // the containers being filled, innermost last
  std::string key_;
  const KeepRule* key_rule_ = nullptr;  // the rule of the member `key_` names
  int skip_ = 0;                        // depth inside a skipped value
  bool skip_next_ = false;
  bool stopped_ = false;
  bool closed_ = false;
  std::string error_;
};

bool PruningSax::key(std::string& k) {
  if (skip_ > 0) return true;
  Frame& f = open_.back();
  const KeepRule* r = KeepRule::Member(f.rule, k);
  // Everything this object needs is read, and nothing after it: an object written last of which
  // only some members are kept, or a dropped member written last.
  const bool all_read = f.rule != nullptr && f.kept_read == f.needed;
  if (f.chain_last && all_read && (f.rule->only || (r != nullptr && r->drop && r->last))) {
    stopped_ = true;
    return false;
  }
  if ((r == nullptr && f.rule != nullptr && f.rule->only) || (r != nullptr && r->drop)) {
    skip_next_ = true;
    return true;
  }
  if (r != nullptr) ++f.kept_read;
  key_rule_ = r;
  key_ = std::move(k);
  return true;
}

Json* PruningSax::Place(Json v) {
  if (open_.empty()) {
    root_ = std::move(v);
    return &root_;
  }
  Json& parent = *open_.back().node;
  if (parent.is_object()) {
    Json& slot = parent[key_];
    slot = std::move(v);
    return &slot;
  }
  parent.push_back(std::move(v));
  return &parent.back();
}

bool PruningSax::Open(Json container) {
  if (skip_ > 0 || skip_next_) {
    skip_next_ = false;
    ++skip_;
    return true;
  }
  Frame f;
  if (open_.empty()) {
    f.rule = &root_rule_;
    f.chain_last = true;
  } else if (const Frame& parent = open_.back(); parent.node->is_object()) {
    // Written last, in a parent written last of which every other member with a rule is read:
    // nothing after this member is needed.
    f.rule = key_rule_;
    f.chain_last = parent.chain_last && parent.kept_read == parent.needed && key_rule_ != nullptr &&
                   key_rule_->last;
  } else {
    f.rule = parent.element_rule;  // an object in a ruled array (null: kept whole)
  }
  const bool object = container.is_object();
  f.node = Place(std::move(container));
  if (!object) {
    // A member's array: its rule applies to each object in it. An array in an array: kept whole.
    f.element_rule = open_.empty() || !open_.back().node->is_object() ? nullptr : f.rule;
    f.rule = nullptr;
    f.chain_last = false;
  }
  if (f.rule != nullptr) {
    for (const KeepRule& m : f.rule->members) f.needed += m.drop ? 0 : 1;
  }
  open_.push_back(f);
  return true;
}

}  // namespace

absl::StatusOr<Json> ParseWithoutStatus(absl::string_view body, absl::string_view what) {
  static const KeepRule* const kRule = new KeepRule{
      .members = {{.key = "metadata", .members = {{.key = "managedFields", .drop = true}}},
                  {.key = "spec"},
                  {.key = "status", .drop = true, .last = true}}};
  return ParsePruned(body, *kRule, what);
}

void EraseStatusAndManagedFields(Json& obj) {
  if (!obj.is_object()) return;
  obj.erase("status");
  if (auto m = obj.find("metadata"); m != obj.end() && m->is_object()) m->erase("managedFields");
}

absl::StatusOr<Json> ParsePruned(absl::string_view body, const KeepRule& rule,
                                 absl::string_view what) {
  if (std::optional<Json> fast = FastParsePruned(body, rule)) return *std::move(fast);
  return ParsePrunedWithNlohmann(body, rule, what);
}

absl::StatusOr<Json> ParsePrunedWithNlohmann(absl::string_view body, const KeepRule& rule,
                                             absl::string_view what) {
  PruningSax sax(rule);
  Json::sax_parse(body.begin(), body.end(), &sax);
  if (!sax.error().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": ", sax.error()));
  }
  if (!sax.complete() || !sax.root().is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": the answer is not an object"));
  }
  return std::move(sax.root());
}

}  // namespace ccm::kube
