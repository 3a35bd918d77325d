#include "vsphere/datacenter.h"

#include "gtest/gtest.h"

namespace ccm::vsphere {
namespace {

TEST(SelectDatacenterTest, Table) {
  std::vector<Datacenter> all = {
      {{"Datacenter", "datacenter-3"}, "dc1", "/dc1", {}, {}},
      {{"Datacenter", "datacenter-7"}, "dc2", "/emea/dc2", {}, {}},
      {{"Datacenter", "datacenter-9"}, "dup", "/a/dup", {}, {}},
      {{"Datacenter", "datacenter-11"}, "dup", "/b/dup", {}, {}},
  };
  struct Case {
    const char* spec;
    absl::StatusCode code;
    const char* moid;
  };
  std::vector<Case> cases = {
      {"dc1", absl::StatusCode::kOk, "datacenter-3"},
      {" dc1 ", absl::StatusCode::kOk, "datacenter-3"},
      {"/dc1", absl::StatusCode::kOk, "datacenter-3"},
      {"/emea/dc2", absl::StatusCode::kOk, "datacenter-7"},
      {"dc2", absl::StatusCode::kOk, "datacenter-7"},
      {"Datacenter:datacenter-7", absl::StatusCode::kOk, "datacenter-7"},
      {"datacenter-3", absl::StatusCode::kOk, "datacenter-3"},
      {"/b/dup", absl::StatusCode::kOk, "datacenter-11"},
      {"dup", absl::StatusCode::kInvalidArgument, ""},
      {"/dc2", absl::StatusCode::kNotFound, ""},
      {"nope", absl::StatusCode::kNotFound, ""},
      {"Datacenter:dc1", absl::StatusCode::kNotFound, ""},
      {"", absl::StatusCode::kInvalidArgument, ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.spec);
    auto r = SelectDatacenter(all, c.spec);
    EXPECT_EQ(r.status().code(), c.code) << r.status();
    if (r.ok()) {
      EXPECT_EQ(r->moref.value, c.moid);
    }
  }
}

}  // namespace
}  // namespace ccm::vsphere
