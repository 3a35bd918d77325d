#include "csi/core/volume_id.h"

#include <gtest/gtest.h>

#include <string>

#include "absl/strings/str_cat.h"

namespace ccm::csi {
namespace {

constexpr char kFcd[] = "a296fbf5-1acd-4e7a-b660-2514edd77027";

TEST(VolumeIdTest, Format) {
  const std::string long_host(100, 'h');
  struct Case {
    const char* name;
    std::string cns_id;
    std::string vcenter;
    size_t count;
    const char* want;  // nullptr = InvalidArgument
  } cases[] = {
      {"one vCenter: bare, as the reference", kFcd, "vc1.lab", 1,
       "a296fbf5-1acd-4e7a-b660-2514edd77027"},
      {"several vCenters: bare too (CnsVolumeInfo records the vCenter)", kFcd, "vc2.lab", 2,
       "a296fbf5-1acd-4e7a-b660-2514edd77027"},
      {"long host", kFcd, long_host, 2, "a296fbf5-1acd-4e7a-b660-2514edd77027"},
      {"vmdk path", "[ds1] kubevols/pv.vmdk", "vc2", 2, "[ds1] kubevols/pv.vmdk"},
      {"empty", "", "vc1", 1, nullptr},
      {"over 128 bytes", std::string(129, 'x'), "vc1", 1, nullptr},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::string> got = FormatVolumeId(c.cns_id, c.vcenter, c.count);
    if (c.want == nullptr) {
      EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument) << c.name;
      continue;
    }
    ASSERT_TRUE(got.ok()) << c.name << ": " << got.status();
    EXPECT_EQ(*got, c.want) << c.name;
  }
}

TEST(VolumeIdTest, Parse) {
  struct Case {
    const char* name;
    std::string id;
    bool ok;
    VolumeRef want;
  } cases[] = {
      {"bare reference ID", kFcd, true, {kFcd, ""}},
      {"qualified", std::string(kFcd) + "@vc2.lab", true, {kFcd, "vc2.lab"}},
      {"qualified IPv6", std::string(kFcd) + "@fd00::10", true, {kFcd, "fd00::10"}},
      {"trailing @ is not qualified", std::string(kFcd) + "@", true, {std::string(kFcd) + "@", ""}},
      {"vmdk path with @ stays bare", "[ds] a@b/pv.vmdk", true, {"[ds] a@b/pv.vmdk", ""}},
      {"any other string is a bare ID (the look-up says NotFound)",
       "some-vol-id",
       true,
       {"some-vol-id", ""}},
      {"empty", "", false, {}},
      {"over 128 bytes", std::string(129, 'a'), false, {}},
  };
  for (const Case& c : cases) {
    absl::StatusOr<VolumeRef> got = ParseVolumeId(c.id);
    if (!c.ok) {
      EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument) << c.name;
      continue;
    }
    ASSERT_TRUE(got.ok()) << c.name << ": " << got.status();
    EXPECT_EQ(*got, c.want) << c.name;
  }
}

TEST(VolumeIdTest, RoundTripAndTheEarlierQualifiedForm) {
  for (size_t count : {1u, 3u}) {
    VolumeRef ref = *ParseVolumeId(*FormatVolumeId(kFcd, "vc2.lab", count));
    EXPECT_EQ(ref, (VolumeRef{kFcd, ""}));
  }
  // IDs our earlier releases wrote with several vCenters still name their vCenter.
  EXPECT_EQ(*ParseVolumeId(absl::StrCat(kFcd, "@vc2.lab")), (VolumeRef{kFcd, "vc2.lab"}));
}

TEST(VolumeIdTest, VCentersToAsk) {
  const std::vector<std::string> two = {"vc1.lab", "VC2.lab"};
  struct Case {
    const char* name;
    VolumeRef ref;
    std::vector<std::string> configured;
    absl::StatusCode code;
    std::vector<std::string> want;
  } cases[] = {
      {"bare, one vCenter", {kFcd, ""}, {"vc1.lab"}, absl::StatusCode::kOk, {"vc1.lab"}},
      {"bare, several: ask all in order", {kFcd, ""}, two, absl::StatusCode::kOk, two},
      {"qualified: only that one, any case",
       {kFcd, "vc2.LAB"},
       two,
       absl::StatusCode::kOk,
       {"VC2.lab"}},
      {"qualified, vCenter gone from the config",
       {kFcd, "vc9.lab"},
       two,
       absl::StatusCode::kFailedPrecondition,
       {}},
      {"nothing configured", {kFcd, ""}, {}, absl::StatusCode::kFailedPrecondition, {}},
  };
  for (const Case& c : cases) {
    auto got = VCentersToAsk(c.ref, c.configured);
    EXPECT_EQ(got.status().code(), c.code) << c.name << ": " << got.status();
    if (got.ok()) {
      EXPECT_EQ(*got, c.want) << c.name;
    }
  }
  EXPECT_NE(VCentersToAsk({kFcd, "vc9.lab"}, two).status().message().find("vc9.lab"),
            absl::string_view::npos);
}

TEST(VolumeIdTest, DecideVolumeVCenter) {
  const absl::Status down = absl::UnavailableError("connection refused");
  struct Case {
    const char* name;
    std::vector<VCenterAnswer> answers;
    absl::StatusCode code;
    const char* want;  // vCenter, or a word of the message
  } cases[] = {
      {"found in one", {{"vc1", {}, false}, {"vc2", {}, true}}, absl::StatusCode::kOk, "vc2"},
      {"found in one while another is down",
       {{"vc1", down, false}, {"vc2", {}, true}},
       absl::StatusCode::kOk,
       "vc2"},
      {"found in two",
       {{"vc1", {}, true}, {"vc2", {}, true}},
       absl::StatusCode::kFailedPrecondition,
       "vc1, vc2"},
      {"not found, one vCenter down: retry, not NotFound",
       {{"vc1", {}, false}, {"vc2", down, false}},
       absl::StatusCode::kUnavailable,
       "connection refused"},
      {"not found anywhere",
       {{"vc1", {}, false}, {"vc2", {}, false}},
       absl::StatusCode::kNotFound,
       "not found"},
      {"no answers", {}, absl::StatusCode::kNotFound, "not found"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::string> got = DecideVolumeVCenter(kFcd, c.answers);
    ASSERT_EQ(got.status().code(), c.code) << c.name << ": " << got.status();
    if (got.ok()) {
      EXPECT_EQ(*got, c.want) << c.name;
    } else {
      EXPECT_NE(got.status().message().find(c.want), absl::string_view::npos)
          << c.name << ": " << got.status();
    }
  }
}

TEST(TransactionVolumeIdTest, Table) {
  struct Case {
    const char* name;
    const char* id;
  } cases[] = {
      {"pvc-7d2f6d43-5a0c-4f3e-9c55-0d3c2a9b1e11", "7d2f6d43-5a0c-4f3e-9c55-0d3c2a9b1e11"},
      {"pvc-7D2F6D43-5A0C-4F3E-9C55-0D3C2A9B1E11", "7d2f6d43-5a0c-4f3e-9c55-0d3c2a9b1e11"},
      {"k8s-pvc-7d2f6d43-5a0c-4f3e-9c55-0d3c2a9b1e11", "7d2f6d43-5a0c-4f3e-9c55-0d3c2a9b1e11"},
      {"pvc-7d2f6d43", ""},                                // not a whole UUID
      {"pvc-7d2f6d43-5a0c-4f3e-9c55-0d3c2a9b1e11-x", ""},  // something after it
      {"pvc-7d2f6d435a0c-4f3e-9c55-0d3c2a9b1e11-", ""},    // dashes misplaced
      {"pvc-7d2f6d43-5a0c-4f3e-9c55-0d3c2a9b1e1g", ""},    // not hexadecimal
      {"sanity-create-volume-7d2f6d43", ""},               // csi-sanity's names
      {"", ""},
  };
  for (const Case& c : cases) EXPECT_EQ(TransactionVolumeId(c.name), c.id) << c.name;
}

}  // namespace
}  // namespace ccm::csi
