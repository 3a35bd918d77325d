#include "csi/core/capacity.h"

#include <gtest/gtest.h>

#include <limits>

#include "csi/core/constants.h"

namespace ccm::csi {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

TEST(CapacityTest, CreateSizeMib) {
  struct Case {
    const char* name;
    CapacityRange range;
    absl::StatusCode code;
    int64_t want_mib;
  } cases[] = {
      {"unset is the reference's 10 GiB default", {0, 0}, absl::StatusCode::kOk, 10240},
      {"exact MiB", {kMiB, 0}, absl::StatusCode::kOk, 1},
      {"one byte rounds up to a MiB", {1, 0}, absl::StatusCode::kOk, 1},
      {"MiB plus one byte rounds up", {kMiB + 1, 0}, absl::StatusCode::kOk, 2},
      {"1 GiB", {kGiB, 0}, absl::StatusCode::kOk, 1024},
      {"limit equal to the rounded size", {kMiB + 1, 2 * kMiB}, absl::StatusCode::kOk, 2},
      {"rounded size above a non-MiB limit",
       {kMiB + 1, kMiB + 2},
       absl::StatusCode::kOutOfRange,
       0},
      {"default lowered to a small limit", {0, 5 * kMiB + 7}, absl::StatusCode::kOk, 5},
      {"default kept under a large limit", {0, 100 * kGiB}, absl::StatusCode::kOk, 10240},
      {"limit below 1 MiB with no required", {0, kMiB - 1}, absl::StatusCode::kOutOfRange, 0},
      {"negative required", {-1, 0}, absl::StatusCode::kInvalidArgument, 0},
      {"negative limit", {0, -1}, absl::StatusCode::kInvalidArgument, 0},
      {"limit below required", {2 * kMiB, kMiB}, absl::StatusCode::kInvalidArgument, 0},
      {"too large to express in bytes", {kMax, 0}, absl::StatusCode::kOutOfRange, 0},
  };
  for (const Case& c : cases) {
    absl::StatusOr<int64_t> got = CreateSizeMib(c.range);
    EXPECT_EQ(got.status().code(), c.code) << c.name << ": " << got.status();
    if (c.code == absl::StatusCode::kOk && got.ok()) {
      EXPECT_EQ(*got, c.want_mib) << c.name;
    }
  }
}

TEST(CapacityTest, OutOfRangeMessageNamesSizes) {
  absl::Status s = CreateSizeMib({kMiB + 1, kMiB + 2}).status();
  EXPECT_NE(s.message().find("2 MiB"), absl::string_view::npos) << s;
  EXPECT_NE(s.message().find(std::to_string(kMiB + 2)), absl::string_view::npos) << s;
}

TEST(CapacityTest, PlanExpand) {
  struct Case {
    const char* name;
    bool has_range;
    CapacityRange range;
    int64_t current_mib;
    AccessType type;
    absl::StatusCode code;
    ExpandPlan want;
  } cases[] = {
      {"grow a filesystem volume",
       true,
       {2 * kGiB, 0},
       1024,
       AccessType::kMount,
       absl::StatusCode::kOk,
       {2048, true, true}},
      {"grow a raw block volume: no node expansion",
       true,
       {2 * kGiB, 0},
       1024,
       AccessType::kBlock,
       absl::StatusCode::kOk,
       {2048, true, false}},
      {"unset access type counts as mount",
       true,
       {2 * kGiB, 0},
       1024,
       AccessType::kUnset,
       absl::StatusCode::kOk,
       {2048, true, true}},
      {"same size: nothing to extend",
       true,
       {kGiB, 0},
       1024,
       AccessType::kMount,
       absl::StatusCode::kOk,
       {1024, false, true}},
      {"smaller: never shrink",
       true,
       {kMiB, 0},
       1024,
       AccessType::kMount,
       absl::StatusCode::kOk,
       {1024, false, true}},
      {"rounded up to a MiB",
       true,
       {kGiB + 1, 0},
       1024,
       AccessType::kMount,
       absl::StatusCode::kOk,
       {1025, true, true}},
      {"missing range",
       false,
       {},
       1024,
       AccessType::kMount,
       absl::StatusCode::kInvalidArgument,
       {}},
      {"empty range",
       true,
       {0, 0},
       1024,
       AccessType::kMount,
       absl::StatusCode::kInvalidArgument,
       {}},
      {"negative", true, {-5, 0}, 1024, AccessType::kMount, absl::StatusCode::kInvalidArgument, {}},
      {"limit below required",
       true,
       {2 * kGiB, kGiB},
       1024,
       AccessType::kMount,
       absl::StatusCode::kInvalidArgument,
       {}},
      {"rounded target above limit",
       true,
       {kGiB + 1, kGiB + 2},
       1024,
       AccessType::kMount,
       absl::StatusCode::kOutOfRange,
       {}},
      {"current size already above limit",
       true,
       {kMiB, 2 * kMiB},
       1024,
       AccessType::kMount,
       absl::StatusCode::kOutOfRange,
       {}},
  };
  for (const Case& c : cases) {
    absl::StatusOr<ExpandPlan> got =
        PlanExpand(c.has_range ? &c.range : nullptr, c.current_mib, c.type);
    EXPECT_EQ(got.status().code(), c.code) << c.name << ": " << got.status();
    if (c.code != absl::StatusCode::kOk || !got.ok()) continue;
    EXPECT_EQ(got->target_mib, c.want.target_mib) << c.name;
    EXPECT_EQ(got->needs_extend, c.want.needs_extend) << c.name;
    EXPECT_EQ(got->node_expansion_required, c.want.node_expansion_required) << c.name;
  }
}

TEST(CapacityTest, NodeExpandTargetMib) {
  EXPECT_EQ(*NodeExpandTargetMib(nullptr), 0);
  CapacityRange r{kGiB + 1, 0};
  EXPECT_EQ(*NodeExpandTargetMib(&r), 1025);
  CapacityRange neg{0, -1};
  EXPECT_EQ(NodeExpandTargetMib(&neg).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(CapacityTest, MibToBytes) {
  EXPECT_EQ(MibToBytes(10240), kDefaultVolumeSizeBytes);
  EXPECT_EQ(MibToBytes(0), 0);
}

}  // namespace
}  // namespace ccm::csi
