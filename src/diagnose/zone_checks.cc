#include "diagnose/zone_checks.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ccm::diagnose {
namespace {

constexpr size_t kShown = 5;

// "cluster c1=zone-a, host esx-2=zone-b, and 3 more".
std::string Carriers(const std::vector<std::string>& items) {
  std::vector<std::string> shown(items.begin(), items.begin() + std::min(items.size(), kShown));
  std::string out = absl::StrJoin(shown, ", ");
  if (items.size() > kShown) absl::StrAppend(&out, " and ", items.size() - kShown, " more");
  return out;
}

void JudgeCategory(const std::string& check, const std::string& category, const ZoneFacts& f,
                   Report& report) {
  if (std::find(f.existing.begin(), f.existing.end(), category) == f.existing.end()) {
    std::vector<std::string> there = f.existing;  // vCenter lists them in no particular order
    std::sort(there.begin(), there.end());
    report.Error(check,
                 absl::StrCat("tag category \"", category, "\" does not exist (categories there: ",
                              there.empty() ? "none" : absl::StrJoin(there, ", "), ")"),
                 absl::StrCat("create it (govc tags.category.create ", category,
                              ") and tag the datacenters, clusters or hosts, or correct the "
                              "category name in the config's [Labels]"));
    return;
  }
  if (!f.attached.ok()) return;
  std::vector<std::string> carriers;
  for (const TaggedEntity& e : f.entities) {
    for (const auto& [cat, tag] : e.tags) {
      if (cat == category) carriers.push_back(absl::StrCat(e.kind, " ", e.name, "=", tag));
    }
  }
  if (carriers.empty()) {
    report.Warn(
        check,
        absl::StrCat("no datacenter, cluster or host carries a tag of category \"", category, "\""),
        "tag them: a node takes the tag of the nearest tagged object above its VM (host, "
        "cluster, folders, datacenter)");
    return;
  }
  report.Ok(check, absl::StrCat(category, ": ", Carriers(carriers)));
}

}  // namespace

void JudgeZones(const std::string& vcenter, const ZoneFacts& f, Report& report) {
  if (f.wanted.empty()) return;
  const std::string check = absl::StrCat("zones ", vcenter);
  if (!f.listed.ok()) {
    report.Error(check, absl::StrCat("cannot list the tag categories: ", f.listed.message()),
                 "the vCenter's REST endpoint (/rest) must answer and the user may read tags");
    return;
  }
  if (!f.attached.ok()) {
    report.Error(check, absl::StrCat("cannot read the attached tags: ", f.attached.message()),
                 "the user needs to read tags on the datacenters, clusters and hosts");
  }
  for (const std::string& category : f.wanted) JudgeCategory(check, category, f, report);
}

}  // namespace ccm::diagnose
