#include "common/call_deadline.h"

#include <algorithm>

namespace ccm {
namespace {

thread_local absl::Time current_deadline = absl::InfiniteFuture();

}  // namespace

absl::Time CallDeadline() { return current_deadline; }

ScopedCallDeadline::ScopedCallDeadline(absl::Time deadline) : previous_(current_deadline) {
  current_deadline = std::min(previous_, deadline);
}

ScopedCallDeadline::~ScopedCallDeadline() { current_deadline = previous_; }

}  // namespace ccm
