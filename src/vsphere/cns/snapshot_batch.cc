#include "vsphere/cns/snapshot_batch.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "common/call_deadline.h"
#include "common/status_macros.h"
#include "vsphere/cns/wire.h"

namespace ccm::vsphere::cns {
namespace {

constexpr int64_t kPage = 128;  // the reference's CnsQuerySnapshots page (QuerySnapshotLimit)

// Whether the query's cursor says no page follows `filter`'s.
bool LastPage(const SnapshotQueryResult& page, const SnapshotQueryFilter& filter) {
  // The cursor's offset is where the next page starts; an answer that does not move ends it.
  return page.entries.empty() || page.cursor.offset <= filter.cursor->offset ||
         page.cursor.offset >= page.cursor.total_records;
}

// An error that asking volume by volume would only repeat: vCenter not reached or not
// answering, no snapshot API, the session lost.
bool SameForEveryVolume(const absl::Status& s) {
  return absl::IsUnavailable(s) || absl::IsDeadlineExceeded(s) || absl::IsUnimplemented(s) ||
         absl::IsUnauthenticated(s);
}

}  // namespace

absl::StatusOr<std::vector<Snapshot>> QuerySnapshotsOf(const std::string& volume_id,
                                                       const SnapshotQuery& query) {
  std::vector<Snapshot> out;
  SnapshotQueryFilter filter{{{volume_id, ""}}, Cursor{0, kPage, 0}};
  for (;;) {
    CCM_ASSIGN_OR_RETURN(SnapshotQueryResult page, query(filter));
    for (SnapshotQueryEntry& e : page.entries) {
      if (!e.fault_name.empty()) {
        return Annotate(FaultStatus(e.fault_name, e.fault_message),
                        absl::StrCat("CNS query snapshots of volume ", volume_id));
      }
      out.push_back(std::move(e.snapshot));
    }
    if (LastPage(page, filter)) return out;
    filter.cursor->offset = page.cursor.offset;
  }
}

std::vector<absl::StatusOr<std::vector<Snapshot>>> QuerySnapshotsOfMany(
    const std::vector<std::string>& volume_ids, const SnapshotQuery& query) {
  std::vector<absl::StatusOr<std::vector<Snapshot>>> out;
  if (volume_ids.size() == 1) {
    out.push_back(QuerySnapshotsOf(volume_ids[0], query));
    return out;
  }
  absl::flat_hash_map<std::string, size_t> index;
  SnapshotQueryFilter filter{{}, Cursor{0, kPage, 0}};
  for (const std::string& id : volume_ids) {
    index.emplace(id, filter.specs.size());
    filter.specs.push_back({id, ""});
  }
  std::vector<std::vector<Snapshot>> found(volume_ids.size());
  bool unclear = false;  // an entry no volume of the batch can be given
  for (;;) {
    absl::StatusOr<SnapshotQueryResult> page = query(filter);
    if (!page.ok() && SameForEveryVolume(page.status())) {
      out.assign(volume_ids.size(), page.status());
      return out;
    }
    if (!page.ok()) {
      unclear = true;  // refused as a whole: perhaps for one bad volume
      found.assign(volume_ids.size(), {});
      break;
    }
    for (SnapshotQueryEntry& e : page->entries) {
      auto it = index.find(e.snapshot.volume_id);
      if (!e.fault_name.empty() || it == index.end()) {
        unclear = true;
        continue;
      }
      found[it->second].push_back(std::move(e.snapshot));
    }
    if (LastPage(*page, filter)) break;
    filter.cursor->offset = page->cursor.offset;
  }
  for (size_t i = 0; i < volume_ids.size(); ++i) {
    if (unclear && found[i].empty()) {
      out.push_back(QuerySnapshotsOf(volume_ids[i], query));
    } else {
      out.push_back(std::move(found[i]));
    }
  }
  return out;
}

absl::StatusOr<std::vector<Snapshot>> SnapshotBatch::Of(const std::string& volume_id,
                                                        const SnapshotQuery& query) {
  auto ask = std::make_shared<Ask>();
  ask->volume_id = volume_id;
  const absl::Time deadline = CallDeadline();
  absl::MutexLock l(&mu_);
  queued_.push_back(ask);
  while (!ask->answered) {
    if (!running_) {
      RunBatch(query);
      continue;
    }
    auto ready = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return ask->answered || !running_; };
    if (!mu_.AwaitWithDeadline(absl::Condition(&ready), deadline)) {
      std::erase(queued_, ask);  // if still queued; a query under way answers it for nobody
      return absl::DeadlineExceededError(
          absl::StrCat("looking up the snapshots of volume ", volume_id,
                       ": the call's deadline passed while the look-ups before it were asked"));
    }
  }
  return std::move(ask->answer);
}

// The leader's turn: the oldest queued look-ups (at most max_volumes_ volumes' worth) as one query.
void SnapshotBatch::RunBatch(const SnapshotQuery& query) {
  running_ = true;
  std::vector<std::shared_ptr<Ask>> batch;
  std::vector<std::string> ids;
  size_t taken = 0;
  for (; taken < queued_.size(); ++taken) {
    const std::string& id = queued_[taken]->volume_id;
    const bool known = std::find(ids.begin(), ids.end(), id) != ids.end();
    if (!known && ids.size() == max_volumes_) break;
    if (!known) ids.push_back(id);
    batch.push_back(queued_[taken]);
  }
  queued_.erase(queued_.begin(), queued_.begin() + static_cast<std::ptrdiff_t>(taken));
  mu_.Unlock();
  std::vector<absl::StatusOr<std::vector<Snapshot>>> answers = QuerySnapshotsOfMany(ids, query);
  mu_.Lock();
  for (const std::shared_ptr<Ask>& a : batch) {
    const size_t i =
        static_cast<size_t>(std::find(ids.begin(), ids.end(), a->volume_id) - ids.begin());
    a->answer = answers[i];
    a->answered = true;
  }
  ++stats_.batches;
  stats_.lookups += batch.size();
  running_ = false;
}

SnapshotBatch::Stats SnapshotBatch::stats() const {
  absl::MutexLock l(&mu_);
  return stats_;
}

void SnapshotBatch::AwaitQueuedForTest(size_t n) const {
  absl::MutexLock l(&mu_);
  auto enough = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return queued_.size() >= n; };
  mu_.Await(absl::Condition(&enough));
}

}  // namespace ccm::vsphere::cns
