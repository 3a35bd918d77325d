// libFuzzer target: the simdjson fast path (fast_json.h) against nlohmann's parse of the same
// bytes. Whatever the fast path takes, nlohmann must take too and build the same value: the same
// text, the same number types, the same pruning and stops. Aborts on any difference.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include "kube/fast_json.h"
#include "kube/metadata_scan.h"
#include "kube/object_scan.h"

namespace {

using Json = nlohmann::json;

// Equal values of equal types all the way down (nlohmann's == calls 1 and 1u equal). The one
// difference allowed: "-0", a signed 0 to nlohmann, is built as an unsigned 0 (simdjson's index
// does not keep the sign of an integer zero).
bool Same(const Json& a, const Json& b) {
  if (a.is_number_integer() && b.is_number_integer() && a == 0 && b == 0) return true;
  if (a.type() != b.type()) return false;
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    for (auto it = a.begin(); it != a.end(); ++it) {
      auto other = b.find(it.key());
      if (other == b.end() || !Same(*it, *other)) return false;
    }
    return true;
  }
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!Same(a[i], b[i])) return false;
    }
    return true;
  }
  return a == b;
}

void Check(bool ok) {
  if (!ok) std::abort();
}

// Every kind of rule at once, with one-letter keys a mutated input hits often: a kept member, a
// `last` object with a dropped member, an `only` object written last, rules on an array's objects.
const ccm::kube::KeepRule& ShortKeysRule() {
  static const auto* rule = new ccm::kube::KeepRule{
      .members = {{.key = "t"},
                  {.key = "o",
                   .members = {{.key = "m", .members = {{.key = "f", .drop = true}}},
                               {.key = "s",
                                .only = true,
                                .members = {{.key = "a"},
                                            {.key = "c", .only = true, .members = {{.key = "t"}}},
                                            {.key = "n", .only = true, .members = {{.key = "u"}}}},
                                .last = true}},
                   .last = true}}};
  return *rule;
}

const ccm::kube::KeepRule& WithoutStatus() {
  static const auto* rule = new ccm::kube::KeepRule{
      .members = {
          {.key = "metadata"}, {.key = "spec"}, {.key = "status", .drop = true, .last = true}}};
  return *rule;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string in(reinterpret_cast<const char*>(data), size);
  if (std::optional<Json> fast = ccm::kube::FastParse(in)) {
    const Json slow = Json::parse(in, nullptr, /*allow_exceptions=*/false);
    Check(!slow.is_discarded() && Same(*fast, slow) && fast->dump() == slow.dump());
  }
  for (const ccm::kube::KeepRule* rule : {&ShortKeysRule(), &WithoutStatus()}) {
    if (std::optional<Json> fast = ccm::kube::FastParsePruned(in, *rule)) {
      absl::StatusOr<Json> slow = ccm::kube::ParsePrunedWithNlohmann(in, *rule, "fuzz");
      Check(slow.ok() && Same(*fast, *slow) && fast->dump() == slow->dump());
    }
  }
  if (std::optional<Json> fast = ccm::kube::FastScanMetadata(in)) {
    absl::StatusOr<Json> slow = ccm::kube::ScanMetadataWithNlohmann(in, "fuzz");
    Check(slow.ok() && Same(*fast, *slow));
  }
  return 0;
}
