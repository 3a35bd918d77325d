#include "cloud/core/zones.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ccm::cloud {
namespace {

absl::StatusOr<std::string> Resolve(const std::vector<AncestorChain>& chains,
                                    absl::string_view kind, absl::string_view category) {
  std::vector<std::string> searched;
  for (const AncestorChain& chain : chains) {
    for (const TaggedObject& obj : chain) {
      searched.push_back(obj.description);
      std::vector<std::string> names;
      for (const AttachedTag& t : obj.tags)
        if (t.category == category) names.push_back(t.name);
      if (names.size() == 1) return names.front();
      if (names.size() > 1) {
        return absl::FailedPreconditionError(absl::StrCat(
            obj.description, " has ", names.size(), " tags of ", kind, " category \"", category,
            "\" (", absl::StrJoin(names, ", "), "); exactly one is allowed"));
      }
    }
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "no tag of ", kind, " category \"", category, "\" found on ",
      searched.empty() ? std::string("any object (no ancestors were given)")
                       : absl::StrJoin(searched, ", ")));
}

}  // namespace

absl::StatusOr<std::optional<ZoneRegion>> ResolveZoneRegion(
    const std::vector<AncestorChain>& chains, absl::string_view zone_category,
    absl::string_view region_category) {
  if (zone_category.empty() || region_category.empty()) return std::nullopt;
  absl::StatusOr<std::string> zone = Resolve(chains, "zone", zone_category);
  if (!zone.ok()) return zone.status();
  absl::StatusOr<std::string> region = Resolve(chains, "region", region_category);
  if (!region.ok()) return region.status();
  return ZoneRegion{*std::move(zone), *std::move(region)};
}

}  // namespace ccm::cloud
