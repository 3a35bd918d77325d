#include "kube/metadata_scan.h"

#include <array>
#include <string>

#include "absl/strings/str_cat.h"
#include "kube/fast_json.h"

namespace ccm::kube {
namespace {

using Json = nlohmann::json;

constexpr std::array<const char*, 4> kKept = {"name", "namespace", "uid", "resourceVersion"};

bool IsKept(const std::string& key) {
  for (const char* k : kKept) {
    if (key == k) return true;
  }
  return false;
}

// nlohmann's SAX interface: follows the nesting depth, keeps the wanted strings of the
// top-level metadata and stops the parse (returns false) when that object ends.
class MetadataSax {
 public:
  bool null() { return true; }
  bool boolean(bool) { return true; }
  bool number_integer(Json::number_integer_t) { return true; }
  bool number_unsigned(Json::number_unsigned_t) { return true; }
  bool number_float(Json::number_float_t, const std::string&) { return true; }
  bool binary(Json::binary_t&) { return true; }
  bool string(std::string& s) {
    if (depth_ == 2 && in_metadata_ && IsKept(key_)) meta_[key_] = std::move(s);
    return true;
  }
  bool start_object(std::size_t) { return Enter(true); }
  bool start_array(std::size_t) { return Enter(false); }
  bool end_array() { return Leave(); }
  bool end_object() {
    if (depth_ == 2 && in_metadata_) {
      done_ = true;
      return false;  // everything wanted is read
    }
    return Leave();
  }
  bool key(std::string& k) {
    if (depth_ == 1) top_key_ = k;
    if (depth_ == 2) key_ = std::move(k);
    return true;
  }
  bool parse_error(std::size_t pos, const std::string&, const nlohmann::detail::exception& e) {
    error_ = absl::StrCat("malformed JSON at byte ", pos, ": ", e.what());
    return false;
  }

  bool done() const { return done_; }
  bool root_object() const { return root_object_; }
  const std::string& error() const { return error_; }
  Json& meta() { return meta_; }

 private:
  bool Enter(bool object) {
    if (depth_ == 0) root_object_ = object;
    ++depth_;
    if (depth_ == 2 && object && top_key_ == "metadata") in_metadata_ = true;
    return true;
  }
  bool Leave() {
    --depth_;
    return true;
  }

  int depth_ = 0;
  bool root_object_ = false;
  bool in_metadata_ = false;
  bool done_ = false;
  std::string top_key_;
  std::string key_;
  std::string error_;
  Json meta_ = Json::object();
};

}  // namespace

absl::StatusOr<Json> ScanMetadata(absl::string_view body, absl::string_view what) {
  if (std::optional<Json> fast = FastScanMetadata(body)) return *std::move(fast);
  return ScanMetadataWithNlohmann(body, what);
}

absl::StatusOr<Json> ScanMetadataWithNlohmann(absl::string_view body, absl::string_view what) {
  MetadataSax sax;
  Json::sax_parse(body.begin(), body.end(), &sax);
  if (sax.done()) return Json{{"metadata", std::move(sax.meta())}};
  if (!sax.error().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": ", sax.error()));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      what, sax.root_object() ? ": the object has no metadata" : ": the answer is not an object"));
}

Json IdentityOf(const Json& obj) {
  Json meta = Json::object();
  auto m = obj.find("metadata");
  if (obj.is_object() && m != obj.end() && m->is_object()) {
    for (const char* k : kKept) {
      auto f = m->find(k);
      if (f != m->end() && f->is_string()) meta[k] = *f;
    }
  }
  return Json{{"metadata", std::move(meta)}};
}

}  // namespace ccm::kube
