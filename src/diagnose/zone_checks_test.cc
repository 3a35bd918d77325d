#include "diagnose/zone_checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ccm::diagnose::zone_checks_test {
namespace {

using ::testing::HasSubstr;

ZoneFacts Healthy() {
  ZoneFacts f;
  f.wanted = {"k8s-zone", "k8s-region"};
  f.existing = {"k8s-region", "k8s-zone", "other"};
  f.entities = {{"datacenter", "dc1", {{"k8s-region", "region-1"}}},
                {"cluster", "dc1/c1", {{"k8s-zone", "zone-a"}, {"other", "x"}}},
                {"host", "dc1/esx-9", {}}};
  return f;
}

TEST(ZoneChecksTest, EachZoneProblemHasItsLine) {
  struct Case {
    std::string name;
    ZoneFacts facts;
    std::vector<std::string> want;
    int errors, warnings;
  };
  ZoneFacts typo = Healthy();
  typo.wanted = {"k8s-zon", "k8s-region"};
  ZoneFacts untagged = Healthy();
  untagged.entities.pop_back();
  untagged.entities.pop_back();
  ZoneFacts unlisted = Healthy();
  unlisted.listed = absl::PermissionDeniedError("HTTP 403");
  ZoneFacts unread = Healthy();
  unread.attached = absl::UnavailableError("HTTP 503");
  ZoneFacts many = Healthy();
  for (int i = 0; i < 7; ++i) {
    many.entities.push_back({"host", "esx-" + std::to_string(i), {{"k8s-zone", "z"}}});
  }
  const std::vector<Case> cases = {
      {"healthy",
       Healthy(),
       {"ok      zones vc1  k8s-zone: cluster dc1/c1=zone-a",
        "k8s-region: datacenter dc1=region-1"},
       0,
       0},
      {"typo",
       typo,
       {"tag category \"k8s-zon\" does not exist (categories there: k8s-region, k8s-zone, other)",
        "govc tags.category.create k8s-zon"},
       1,
       0},
      {"untagged",
       untagged,
       {"no datacenter, cluster or host carries a tag of category \"k8s-zone\""},
       0,
       1},
      {"unlisted", unlisted, {"cannot list the tag categories: HTTP 403"}, 1, 0},
      {"unread", unread, {"cannot read the attached tags: HTTP 503"}, 1, 0},
      {"many", many, {"host esx-3=z and 3 more"}, 0, 0},
  };
  for (const Case& c : cases) {
    Report r;
    JudgeZones("vc1", c.facts, r);
    for (const std::string& w : c.want) EXPECT_THAT(r.Text(), HasSubstr(w)) << c.name;
    EXPECT_EQ(r.Count(Level::kError), c.errors) << c.name << "\n" << r.Text();
    EXPECT_EQ(r.Count(Level::kWarning), c.warnings) << c.name << "\n" << r.Text();
  }
  Report none;
  JudgeZones("vc1", ZoneFacts{}, none);
  EXPECT_TRUE(none.findings().empty());
}

}  // namespace
}  // namespace ccm::diagnose::zone_checks_test
