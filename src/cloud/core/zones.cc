#include "cloud/core/zones.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"

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
            obj.description, obj.path.empty() ? "" : absl::StrCat(" at ", obj.path), " has ",
            names.size(), " tags of ", kind, " category \"", category, "\": ",
            absl::StrJoin(names, ", ",
                          [](std::string* out, const std::string& n) {
                            absl::StrAppend(out, "\"", n, "\"");
                          }),
            "; exactly one is allowed per object (the Go vSphere provider would silently take the "
            "last one; we refuse to guess): detach all but one"));
      }
    }
  }
  return absl::FailedPreconditionError(
      absl::StrCat("no tag of ", kind, " category \"", category, "\" found on ",
                   searched.empty() ? std::string("any object (no ancestors were given)")
                                    : absl::StrJoin(searched, ", ")));
}

}  // namespace

std::vector<std::string> InventoryPaths(const std::vector<std::string>& names_nearest_first,
                                        bool last_is_root, absl::string_view base) {
  std::vector<std::string> farthest_first;
  farthest_first.reserve(names_nearest_first.size());
  std::string path(base);
  for (auto it = names_nearest_first.rbegin(); it != names_nearest_first.rend(); ++it) {
    if (it == names_nearest_first.rbegin() && last_is_root) {
      farthest_first.emplace_back(1, '/');  // the root folder itself
      continue;
    }
    path.push_back('/');
    path.append(absl::StrReplaceAll(*it, {{"/", "%2f"}}));
    farthest_first.push_back(path);
  }
  return {farthest_first.rbegin(), farthest_first.rend()};
}

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
