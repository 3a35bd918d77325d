#include "app/csi/diagnose_volumes.h"

#include <gtest/gtest.h>

namespace ccm::app::diagnose_volumes_test {
namespace {

using kube::Json;

Json Event(const std::string& kind, const std::string& name, const std::string& reason,
           const std::string& when, const std::string& message) {
  Json e = {{"involvedObject", {{"kind", kind}, {"name", name}}},
            {"reason", reason},
            {"message", message}};
  if (!when.empty()) e["lastTimestamp"] = when;
  return e;
}

TEST(DiagnoseVolumesTest, NewestProvisioningFailureOfTheClaim) {
  struct Case {
    std::string name;
    std::vector<Json> events;
    std::string want;
  };
  const std::string pvc = "PersistentVolumeClaim";
  const std::vector<Case> cases = {
      {"none", {}, ""},
      {"newest wins",
       {Event(pvc, "data", "ProvisioningFailed", "2026-11-26T10:00:02Z", "second"),
        Event(pvc, "data", "ProvisioningFailed", "2026-11-26T10:00:01Z", "first")},
       "second"},
      {"other claim, other reason, other kind",
       {Event(pvc, "logs", "ProvisioningFailed", "2026-11-26T10:00:09Z", "logs"),
        Event(pvc, "data", "Provisioning", "2026-11-26T10:00:09Z", "started"),
        Event("Pod", "data", "ProvisioningFailed", "2026-11-26T10:00:09Z", "pod"),
        Event(pvc, "data", "ProvisioningFailed", "2026-11-26T10:00:01Z", "ours")},
       "ours"},
      {"one without a time does not beat one with",
       {Event(pvc, "data", "ProvisioningFailed", "2026-11-26T10:00:01Z", "timed"),
        Event(pvc, "data", "ProvisioningFailed", "", "untimed")},
       "timed"},
      {"only one without a time",
       {Event(pvc, "data", "ProvisioningFailed", "", "untimed")},
       "untimed"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(NewestProvisioningFailure(c.events, "data"), c.want) << c.name;
  }
}

}  // namespace
}  // namespace ccm::app::diagnose_volumes_test
