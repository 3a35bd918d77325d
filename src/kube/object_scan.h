#pragma once
// Kubernetes objects parsed without the parts their reader never uses: those parts are skipped,
// not built, and the parse stops once nothing after it is needed. Two uses:
// - a writer whose next write needs the stored metadata and spec (a Node's labels, providerID
//   and taints) but not its status, which on a real Node is most of the answer (conditions,
//   capacity, nodeInfo, the images list), nor the managed fields: ParseWithoutStatus;
// - an informer whose cache keeps a few fields of each watched object (a Node's addresses,
//   conditions and systemUUID): ParsePruned with the cache's rule.
// The API server writes an object's members in its Go type's order (kind, apiVersion, metadata,
// spec, status) and a watch event's type before its object; the stops rely on that order only
// where a rule says so (`last`), and a member met out of that order is skipped, not a stop.

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace ccm::kube {

// What a reader keeps of an object while it is parsed: members it never reads are skipped, not
// built. Rules apply to objects; a rule on a member whose value is an array applies to each
// object in it (a Node's conditions: only type and status of each). A member without a rule is
// kept whole, and so is an array in an array.
struct KeepRule {
  std::string key;                // the member this rule is for (unused for the outermost)
  bool drop = false;              // the member is not kept
  bool only = false;              // of this object, only the members with a rule are kept
  std::vector<KeepRule> members;  // rules of named members
  // The API server writes this member last in its object (a Node's status, a watch event's
  // object). In an object that is itself `last` (as is each around it; the outermost counts as
  // last), with its other ruled members read: a dropped `last` member stops the parse where it
  // starts; an `only` member that is `last` stops it at its next member once its own ruled
  // members are read.
  bool last = false;

  // The rule of member `name` of `rule`'s object; null when `rule` is null or has none.
  static const KeepRule* Member(const KeepRule* rule, std::string_view name) {
    if (rule == nullptr) return nullptr;
    for (const KeepRule& m : rule->members) {
      if (m.key == name) return &m;
    }
    return nullptr;
  }
};

// `body` parsed under `rule` (simdjson's fast path, fast_json.h, else nlohmann's SAX parse).
// Errors as ParseWithoutStatus. A parse that stopped early has
// nothing of what the API server writes after the `last` members; a caller that needs a member
// an unusual order may have placed later (a watch event's "type") checks for it.
absl::StatusOr<nlohmann::json> ParsePruned(absl::string_view body, const KeepRule& rule,
                                           absl::string_view what);

// The same with nlohmann's parser alone (the fast path is tested against it).
absl::StatusOr<nlohmann::json> ParsePrunedWithNlohmann(absl::string_view body, const KeepRule& rule,
                                                       absl::string_view what);

// The object without "status" and without metadata.managedFields (on a real API server a few kB
// of every Node: a writer never reads them); the parse stops at the status when metadata and spec
// came before it. Errors (InvalidArgument, naming `what`): malformed JSON before the parse could
// stop, not an object.
absl::StatusOr<nlohmann::json> ParseWithoutStatus(absl::string_view body, absl::string_view what);

// What ParseWithoutStatus leaves out, taken from an object already parsed (for clients that have
// the whole answer).
void EraseStatusAndManagedFields(nlohmann::json& obj);

}  // namespace ccm::kube
