#include "csi/core/paging.h"

#include <gtest/gtest.h>

namespace ccm::csi {
namespace {

TEST(PagingTest, PageOf) {
  struct Case {
    const char* name;
    size_t total;
    const char* token;
    int32_t max_entries;
    size_t default_max;
    absl::StatusCode code;
    Page want;
  } cases[] = {
      {"everything", 5, "", 0, 0, absl::StatusCode::kOk, {0, 5, ""}},
      {"first page", 5, "", 2, 0, absl::StatusCode::kOk, {0, 2, "2"}},
      {"middle page", 5, "2", 2, 0, absl::StatusCode::kOk, {2, 4, "4"}},
      {"last page", 5, "4", 2, 0, absl::StatusCode::kOk, {4, 5, ""}},
      {"exact fit has no next token", 4, "2", 2, 0, absl::StatusCode::kOk, {2, 4, ""}},
      {"default limit when the CO sets none", 5, "", 0, 3, absl::StatusCode::kOk, {0, 3, "3"}},
      {"CO's limit wins over the default", 5, "", 1, 3, absl::StatusCode::kOk, {0, 1, "1"}},
      {"list shrank past the token: empty last page",
       3,
       "4",
       2,
       0,
       absl::StatusCode::kOk,
       {3, 3, ""}},
      {"empty listing", 0, "", 10, 0, absl::StatusCode::kOk, {0, 0, ""}},
      {"garbage token", 5, "invalid-token", 0, 0, absl::StatusCode::kAborted, {}},
      {"negative token", 5, "-1", 0, 0, absl::StatusCode::kAborted, {}},
      {"signed token", 5, "+1", 0, 0, absl::StatusCode::kAborted, {}},
      {"token overflowing 64 bits",
       5,
       "99999999999999999999999",
       0,
       0,
       absl::StatusCode::kAborted,
       {}},
      {"negative max_entries", 5, "", -1, 0, absl::StatusCode::kInvalidArgument, {}},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Page> got = PageOf(c.total, c.token, c.max_entries, c.default_max);
    ASSERT_EQ(got.status().code(), c.code) << c.name << ": " << got.status();
    if (!got.ok()) continue;
    EXPECT_EQ(got->begin, c.want.begin) << c.name;
    EXPECT_EQ(got->end, c.want.end) << c.name;
    EXPECT_EQ(got->next_token, c.want.next_token) << c.name;
  }
}

TEST(PagingTest, WalkingAllPagesVisitsEveryEntryOnce) {
  std::string token;
  size_t seen = 0;
  int calls = 0;
  do {
    absl::StatusOr<Page> page = PageOf(7, token, 3);
    ASSERT_TRUE(page.ok()) << page.status();
    EXPECT_EQ(page->begin, seen);
    seen = page->end;
    token = page->next_token;
    ASSERT_LT(++calls, 10);
  } while (!token.empty());
  EXPECT_EQ(seen, 7u);
  EXPECT_EQ(calls, 3);
}

}  // namespace
}  // namespace ccm::csi
