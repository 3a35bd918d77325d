#include "csi/controller/operation_store.h"

#include <algorithm>
#include <cctype>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "kube/errors.h"
#include "kube/informer.h"
#include "kube/resource.h"

namespace ccm::csi {
namespace {

constexpr size_t kLatestKept = 10;  // the reference keeps ten latest operations

const kube::Resource& Requests() {
  static const kube::Resource* const r =
      new kube::Resource{"cns.vmware.com", "v1alpha1", "cnsvolumeoperationrequests",
                         "CnsVolumeOperationRequest", true};
  return *r;
}

kube::Json Details(const OperationRecord& r) {
  // metav1.Time's form: RFC 3339 in UTC with "Z", whole seconds.
  kube::Json d = {{"taskInvocationTimestamp",
                   absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", r.invoked, absl::UTCTimeZone())},
                  {"taskId", r.task_id},
                  {"taskStatus", r.status}};
  if (!r.vcenter.empty()) d["vCenterServer"] = r.vcenter;
  if (!r.error.empty()) d["error"] = r.error;
  return d;
}

class MemoryStore final : public OperationStore {
 public:
  absl::StatusOr<std::optional<OperationRecord>> Get(const std::string& name) override {
    absl::MutexLock l(&mu_);
    auto it = records_.find(name);
    if (it == records_.end()) return std::optional<OperationRecord>();
    return std::optional<OperationRecord>(it->second);
  }
  absl::Status Put(const OperationRecord& record) override {
    absl::MutexLock l(&mu_);
    records_[record.name] = record;
    return absl::OkStatus();
  }
  absl::Status Delete(const std::string& name) override {
    absl::MutexLock l(&mu_);
    records_.erase(name);
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<OperationRecord>> List() override {
    absl::MutexLock l(&mu_);
    std::vector<OperationRecord> out;
    for (const auto& [name, r] : records_) out.push_back(r);
    return out;
  }

 private:
  absl::Mutex mu_;
  std::map<std::string, OperationRecord> records_ ABSL_GUARDED_BY(mu_);
};

class KubeStore final : public OperationStore {
 public:
  KubeStore(kube::Client& client, std::string ns) : client_(client), ns_(std::move(ns)) {
    kube::InformerOptions o;
    o.ns = ns_;
    o.compact_store = true;  // thousands of records at scale (kept 15 minutes after they end)
    // The reference's Role has no watch on these records: then every read is a GET, and the
    // informer does not relist them all over and over.
    o.stop_when_forbidden = true;
    informer_ = std::make_unique<kube::Informer>(client, Requests(), std::move(o));
  }

  bool durable() const override { return true; }
  void Start() override { informer_->Start(); }
  void Stop() override { informer_->Stop(); }

  absl::StatusOr<std::optional<OperationRecord>> GetCached(const std::string& name) override {
    // Not yet listed, or the watch failed and has not come back (or is forbidden): ask.
    if (!informer_->Fresh()) return Get(name);
    kube::ObjectPtr obj = informer_->Get(absl::StrCat(ns_, "/", SafeObjectName(name)));
    if (obj == nullptr) {
      Remember(name, std::nullopt, kTaskInProgress);  // the next Put creates it at once
      return std::optional<OperationRecord>();
    }
    absl::StatusOr<OperationRecord> r = RecordFromObject(*obj);
    if (!r.ok() || r->status == kTaskInProgress) return Get(name);  // waited for: read it fresh
    CCM_RETURN_IF_ERROR(CheckHolds(*r, name));
    // Kept whatever its status: the operation writes its record next, on top of this object (a
    // stale one costs a conflict and a GET then).
    Remember(name, *obj, kTaskInProgress);
    return std::optional<OperationRecord>(*std::move(r));
  }

  absl::StatusOr<std::optional<OperationRecord>> Get(const std::string& name) override {
    absl::StatusOr<kube::Json> obj = client_.Get(Requests(), ns_, SafeObjectName(name));
    if (kube::IsNotFoundError(obj.status())) {
      Remember(name, std::nullopt, kTaskInProgress);  // the next Put creates it at once
      return std::optional<OperationRecord>();
    }
    if (!obj.ok()) return obj.status();
    absl::StatusOr<OperationRecord> r = RecordFromObject(*obj);
    if (!r.ok()) return r.status();
    CCM_RETURN_IF_ERROR(CheckHolds(*r, name));
    Remember(name, *obj, r->status);
    return std::optional<OperationRecord>(*std::move(r));
  }

  // An update goes on top of the object this store last read or wrote (one request, not a GET
  // and a PUT); a conflict reads it again.
  absl::Status Put(const OperationRecord& record) override {
    for (int attempt = 0; attempt < 3; ++attempt) {
      std::optional<std::optional<kube::Json>> cached = Known(record.name);
      std::optional<kube::Json> known;
      if (cached) {
        known = *cached;
      } else {
        absl::StatusOr<kube::Json> got = client_.Get(Requests(), ns_, SafeObjectName(record.name));
        if (got.ok()) {
          absl::StatusOr<OperationRecord> held = RecordFromObject(*got);
          if (held.ok()) CCM_RETURN_IF_ERROR(CheckHolds(*held, record.name));
          known = *std::move(got);
        }
        if (!got.ok() && !kube::IsNotFoundError(got.status())) return got.status();
      }
      absl::StatusOr<kube::Json> written =
          known ? client_.Update(Requests(), RecordToObject(record, &*known, ns_), "")
                : client_.Create(Requests(), ns_, RecordToObject(record, nullptr, ns_));
      if (written.ok()) {
        Remember(record.name, *written, record.status);
        return absl::OkStatus();
      }
      Forget(record.name);
      if (!kube::IsConflict(written.status()) && !kube::IsAlreadyExistsError(written.status())) {
        return written.status();
      }
    }
    return absl::AbortedError(
        absl::StrCat("CnsVolumeOperationRequest ", record.name, ": concurrent writers"));
  }

  absl::StatusOr<bool> CreateIfAbsent(const OperationRecord& record) override {
    absl::StatusOr<kube::Json> written =
        client_.Create(Requests(), ns_, RecordToObject(record, nullptr, ns_));
    if (kube::IsAlreadyExistsError(written.status())) return false;
    if (!written.ok()) return written.status();
    Remember(record.name, *written, record.status);
    return true;
  }

  absl::Status Delete(const std::string& name) override {
    Forget(name);
    absl::Status s = client_.Delete(Requests(), ns_, SafeObjectName(name), {});
    return kube::IsNotFoundError(s) ? absl::OkStatus() : s;
  }

  absl::Status DeleteListed(const OperationRecord& record) override {
    if (record.object_name.empty()) return Delete(record.name);
    Forget(record.name);
    absl::Status s = client_.Delete(Requests(), ns_, record.object_name, {});
    return kube::IsNotFoundError(s) ? absl::OkStatus() : s;
  }

  absl::StatusOr<std::vector<OperationRecord>> List() override {
    std::vector<OperationRecord> out;
    kube::ListOptions o;
    o.limit = 500;
    do {
      absl::StatusOr<kube::ListResult> page = client_.List(Requests(), ns_, o);
      if (!page.ok()) return page.status();
      for (const kube::Json& item : page->items) {
        if (absl::StatusOr<OperationRecord> r = RecordFromObject(item); r.ok()) {
          out.push_back(*std::move(r));
        }
      }
      o.continue_token = page->continue_token;
    } while (!o.continue_token.empty());
    return out;
  }

 private:
  // A record is used only for the operation it names (spec.name): an object of the same name
  // that holds another operation (written by an earlier version's lossy naming) is refused.
  absl::Status CheckHolds(const OperationRecord& r, const std::string& name) const {
    if (r.name == name) return absl::OkStatus();
    return absl::FailedPreconditionError(absl::StrCat(
        "CnsVolumeOperationRequest ", ns_, "/", SafeObjectName(name), " holds operation \"", r.name,
        "\", not \"", name, "\": delete it once that operation has ended"));
  }

  // Only operations in progress are kept (the next write of the same record is soon); an absent
  // object is remembered as nullopt.
  void Remember(const std::string& name, std::optional<kube::Json> obj, const std::string& status) {
    absl::MutexLock l(&mu_);
    if (status == kTaskInProgress) {
      if (known_.size() >= 10000) known_.clear();  // names read and never written: a bound
      known_[name] = std::move(obj);
    } else {
      known_.erase(name);
    }
  }
  void Forget(const std::string& name) {
    absl::MutexLock l(&mu_);
    known_.erase(name);
  }
  // nullopt: not known; a nullopt inside: known to be absent.
  std::optional<std::optional<kube::Json>> Known(const std::string& name) {
    absl::MutexLock l(&mu_);
    auto it = known_.find(name);
    if (it == known_.end()) return std::nullopt;
    return it->second;
  }

  kube::Client& client_;
  const std::string ns_;
  std::unique_ptr<kube::Informer> informer_;
  absl::Mutex mu_;
  std::map<std::string, std::optional<kube::Json>> known_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

std::unique_ptr<OperationStore> NewMemoryOperationStore() {
  return std::make_unique<MemoryStore>();
}

std::unique_ptr<OperationStore> NewKubeOperationStore(kube::Client& client, std::string ns) {
  return std::make_unique<KubeStore>(client, std::move(ns));
}

namespace {

bool IsAlnumLower(char c) { return absl::ascii_isdigit(c) || (c >= 'a' && c <= 'z'); }

bool IsObjectName(const std::string& name) {
  if (name.empty() || name.size() > 253) return false;
  if (!IsAlnumLower(name.front()) || !IsAlnumLower(name.back())) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return IsAlnumLower(c) || c == '-' || c == '.'; });
}

uint64_t Fnv1a64(absl::string_view s) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace

std::string SafeObjectName(const std::string& name) {
  if (IsObjectName(name)) return name;
  std::string out;
  for (char c : name) {
    const char l = absl::ascii_tolower(c);
    out.push_back(IsAlnumLower(l) || l == '.' ? l : '-');
  }
  constexpr size_t kSuffix = 17;  // "-" + 16 hex digits
  if (out.size() > 253 - kSuffix) out.resize(253 - kSuffix);
  const size_t first = out.find_first_not_of("-.");
  out = first == std::string::npos ? std::string() : out.substr(first);
  while (!out.empty() && (out.back() == '-' || out.back() == '.')) out.pop_back();
  const std::string hash = absl::StrFormat("%016x", Fnv1a64(name));
  return out.empty() ? hash : absl::StrCat(out, "-", hash);
}

kube::Json RecordToObject(const OperationRecord& r, const kube::Json* existing,
                          const std::string& ns) {
  kube::Json obj = existing ? *existing : kube::Json::object();
  obj["apiVersion"] = "cns.vmware.com/v1alpha1";
  obj["kind"] = "CnsVolumeOperationRequest";
  obj["metadata"]["name"] = SafeObjectName(r.name);
  obj["metadata"]["namespace"] = ns;
  obj["spec"]["name"] = r.name;
  kube::Json& st = obj["status"];
  if (!r.volume_id.empty()) st["volumeID"] = r.volume_id;
  if (!r.snapshot_id.empty()) st["snapshotID"] = r.snapshot_id;
  if (r.capacity_mb > 0) st["capacity"] = r.capacity_mb;
  if (r.error_count > 0) st["errorCount"] = r.error_count;
  const kube::Json d = Details(r);
  if (!st.contains("firstOperationDetails")) st["firstOperationDetails"] = d;
  kube::Json& latest = st["latestOperationDetails"];
  if (!latest.is_array()) latest = kube::Json::array();
  // The same attempt (its invocation time) is updated in place; a new one is appended.
  if (!latest.empty() && latest.back().value("taskInvocationTimestamp", "") ==
                             d["taskInvocationTimestamp"].get<std::string>()) {
    latest.back() = d;
  } else {
    latest.push_back(d);
  }
  while (latest.size() > kLatestKept) latest.erase(latest.begin());
  // The first attempt's record follows it while it is the only one (its task, its outcome).
  if (latest.size() == 1) st["firstOperationDetails"] = d;
  return obj;
}

absl::StatusOr<OperationRecord> RecordFromObject(const kube::Json& obj) {
  if (!obj.is_object() || !obj.contains("spec") || !obj["spec"].is_object()) {
    return absl::InvalidArgumentError("CnsVolumeOperationRequest without spec");
  }
  OperationRecord r;
  r.name = obj["spec"].value("name", "");
  if (r.name.empty()) return absl::InvalidArgumentError("CnsVolumeOperationRequest without a name");
  if (obj.contains("metadata") && obj["metadata"].is_object()) {
    r.object_name = obj["metadata"].value("name", "");
  }
  const kube::Json status = obj.value("status", kube::Json::object());
  r.volume_id = status.value("volumeID", "");
  r.snapshot_id = status.value("snapshotID", "");
  r.capacity_mb = status.value("capacity", int64_t{0});
  r.error_count = status.value("errorCount", 0);
  kube::Json d = status.value("firstOperationDetails", kube::Json::object());
  if (status.contains("latestOperationDetails") && status["latestOperationDetails"].is_array() &&
      !status["latestOperationDetails"].empty()) {
    d = status["latestOperationDetails"].back();
  }
  r.task_id = d.value("taskId", "");
  r.vcenter = d.value("vCenterServer", "");
  r.status = d.value("taskStatus", "");
  r.error = d.value("error", "");
  std::string err;
  if (!absl::ParseTime(absl::RFC3339_full, d.value("taskInvocationTimestamp", ""), &r.invoked,
                       &err)) {
    r.invoked = absl::UnixEpoch();
  }
  return r;
}

std::vector<OperationRecord> StaleRecords(const std::vector<OperationRecord>& records,
                                          absl::Time now, absl::Duration age) {
  std::vector<OperationRecord> out;
  for (const OperationRecord& r : records) {
    if (r.status == kTaskInProgress) continue;
    if (now - r.invoked > age) out.push_back(r);
  }
  return out;
}

}  // namespace ccm::csi
