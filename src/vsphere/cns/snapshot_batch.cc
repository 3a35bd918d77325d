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
  auto send = [&](const std::vector<std::string>& ids, int) {
    return QuerySnapshotsOfMany(ids, query);
  };
  absl::StatusOr<absl::StatusOr<std::vector<Snapshot>>> answer =
      calls_.Submit(volume_id, 0, CallDeadline(), send,
                    absl::StrCat("looking up the snapshots of volume ", volume_id));
  if (!answer.ok()) return answer.status();
  return *std::move(answer);
}

}  // namespace ccm::vsphere::cns
