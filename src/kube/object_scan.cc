#include "kube/object_scan.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace ccm::kube {
namespace {

using Json = nlohmann::json;

// nlohmann's SAX interface: builds the object as its own parser would, except the value of the
// top-level key "status", which it skips; stops (returns false) at that key when the top-level
// metadata and spec are already read.
class WithoutStatusSax {
 public:
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
  bool key(std::string& k) {
    if (skip_ > 0) return true;
    if (open_.size() == 1) {
      if (k == "status") {
        if (seen_metadata_ && seen_spec_) {
          stopped_ = true;
          return false;  // everything wanted is read
        }
        skip_next_ = true;
        return true;
      }
      seen_metadata_ = seen_metadata_ || k == "metadata";
      seen_spec_ = seen_spec_ || k == "spec";
    }
    key_ = std::move(k);
    return true;
  }
  bool parse_error(std::size_t pos, const std::string&, const nlohmann::detail::exception& e) {
    error_ = absl::StrCat("malformed JSON at byte ", pos, ": ", e.what());
    return false;
  }

  bool complete() const { return stopped_ || (closed_ && error_.empty()); }
  const std::string& error() const { return error_; }
  Json& root() { return root_; }

 private:
  // Places `v` where the parse is (the root, the open object's current key, or the open array's
  // end) and returns where it went.
  Json* Place(Json v) {
    if (open_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    Json& parent = *open_.back();
    if (parent.is_object()) {
      Json& slot = parent[key_];
      slot = std::move(v);
      return &slot;
    }
    parent.push_back(std::move(v));
    return &parent.back();
  }
  bool Value(Json v) {
    if (skip_ > 0) return true;
    if (skip_next_) {
      skip_next_ = false;
      return true;
    }
    Place(std::move(v));
    return true;
  }
  bool Open(Json container) {
    if (skip_ > 0 || skip_next_) {
      skip_next_ = false;
      ++skip_;
      return true;
    }
    open_.push_back(Place(std::move(container)));
    return true;
  }
  bool Close() {
    if (skip_ > 0) {
      --skip_;
      return true;
    }
    open_.pop_back();
    closed_ = open_.empty();
    return true;
  }

  Json root_;
  std::vector<Json*> open_;  // the containers being filled, innermost last
  std::string key_;
  int skip_ = 0;  // depth inside a skipped status value
  bool skip_next_ = false;
  bool seen_metadata_ = false;
  bool seen_spec_ = false;
  bool stopped_ = false;
  bool closed_ = false;
  std::string error_;
};

}  // namespace

absl::StatusOr<Json> ParseWithoutStatus(absl::string_view body, absl::string_view what) {
  WithoutStatusSax sax;
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
