#include "vsphere/inventory_cache.h"

#include <malloc.h>

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "vsphere/datacenter.h"
#include "vsphere/property_collector.h"
#include "vsphere/soap.h"
#include "vsphere/update_stream.h"

namespace ccm::vsphere {
namespace {

bool SameNics(const std::vector<GuestNic>& a, const std::vector<GuestNic>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].device_config_id != b[i].device_config_id || a[i].network != b[i].network ||
        a[i].mac_address != b[i].mac_address || a[i].connected != b[i].connected ||
        a[i].ip_addresses != b[i].ip_addresses) {
      return false;
    }
  }
  return true;
}

// Whether a resync changed anything a controller cares about.
bool SameFacts(const VmFacts& a, const VmFacts& b) {
  return a.name == b.name && a.bios_uuid == b.bios_uuid && a.instance_uuid == b.instance_uuid &&
         a.power_state == b.power_state && a.guest_hostname == b.guest_hostname &&
         SameNics(a.nics, b.nics) && a.config_guest_id == b.config_guest_id &&
         a.guest_guest_id == b.guest_guest_id && a.num_cpu == b.num_cpu &&
         a.memory_mb == b.memory_mb && a.metadata == b.metadata &&
         a.metadata_encoding == b.metadata_encoding && a.host == b.host &&
         a.resource_pool == b.resource_pool && a.parent_folder == b.parent_folder &&
         a.disks == b.disks;
}

void ApplyChanges(VmFacts& vm, const ObjectUpdate& u) {
  for (const PropertyChange& c : u.changes) {
    pugi::xml_node val;
    if (c.op == PropertyChangeOp::kAssign || c.op == PropertyChangeOp::kAdd) val = c.val;
    absl::Status s = ApplyVmProperty(vm, c.name, val);
    // A value we cannot parse would fail again after a resync: keep the rest of the VM.
    if (!s.ok()) LOG_WARN("inventory cache: {} {}: {}", u.obj.value, c.name, s);
  }
}

using VmMap = InventoryCache::VmMap;

// Applies one object update to `vms`; returns the event, if any.
std::optional<VmChangeKind> ApplyObject(
    VmMap& vms, const ObjectUpdate& u,
    const std::map<std::string, std::pair<Moref, std::string>>& filter_dc,
    const std::string& filter) {
  if (u.obj.type != "VirtualMachine") return std::nullopt;
  switch (u.kind) {
    case ObjectUpdateKind::kEnter: {
      VmFacts vm;
      vm.moref = u.obj;
      if (auto it = filter_dc.find(filter); it != filter_dc.end()) {
        vm.datacenter = it->second.first;
        vm.datacenter_name = it->second.second;
      }
      ApplyChanges(vm, u);
      vms[u.obj.value] = std::move(vm);
      return VmChangeKind::kAdded;
    }
    case ObjectUpdateKind::kModify: {
      auto it = vms.find(u.obj.value);
      if (it == vms.end()) return std::nullopt;  // not ours (never entered)
      ApplyChanges(it->second, u);
      return VmChangeKind::kModified;
    }
    case ObjectUpdateKind::kLeave:
      if (vms.erase(u.obj.value) == 0) return std::nullopt;
      return VmChangeKind::kRemoved;
  }
  return std::nullopt;
}

// NotAuthenticated for a property: the session is gone (the VM is not without properties).
absl::Status SessionLost(const ObjectUpdate& u) {
  for (const MissingProperty& m : u.missing) {
    if (m.fault_type == "NotAuthenticated") {
      return NamedFaultStatus("NotAuthenticated",
                              absl::StrCat("property ", m.path, " of ", u.obj.ToString(),
                                           " is not readable without a session (missingSet)"));
    }
  }
  return absl::OkStatus();
}

// Applies each VM of a full load to `vms` as soon as the parser hands it on, so the answer is
// never held whole (Load commits `vms` only once every answer arrived).
class LoadHandler : public UpdateHandler {
 public:
  LoadHandler(VmMap& vms, const std::map<std::string, std::pair<Moref, std::string>>& filter_dc)
      : vms_(vms), filter_dc_(filter_dc) {}
  absl::Status OnObject(const std::string& filter, ObjectUpdate update) override {
    CCM_RETURN_IF_ERROR(SessionLost(update));
    ApplyObject(vms_, update, filter_dc_, filter);
    return absl::OkStatus();
  }

 private:
  VmMap& vms_;
  const std::map<std::string, std::pair<Moref, std::string>>& filter_dc_;
};

}  // namespace

absl::string_view ToString(VmChangeKind k) {
  switch (k) {
    case VmChangeKind::kAdded:
      return "added";
    case VmChangeKind::kModified:
      return "modified";
    case VmChangeKind::kRemoved:
      return "removed";
  }
  return "?";
}

InventoryCache::InventoryCache(Client& client, InventoryCacheOptions options)
    : client_(client),
      options_(std::move(options)),
      clock_(options_.clock ? options_.clock : &Clock::Real()),
      random_(options_.random ? options_.random : &Random::Real()) {}

InventoryCache::~InventoryCache() { Stop(); }

void InventoryCache::Start() {
  absl::MutexLock l(&stop_mu_);
  if (thread_.joinable() || stopping()) return;
  thread_ = std::thread([this] {
    Run();
    exited_.Notify();
  });
}

void InventoryCache::Stop() {
  absl::MutexLock l(&stop_mu_);
  if (!thread_.joinable()) return;
  if (!stop_.HasBeenNotified()) stop_.Notify();
  {
    // Ends the transfer of the pending wait: CancelWaitForUpdates cannot reach a wait whose
    // collector vCenter no longer knows (a lost session), and a hung vCenter answers nothing.
    absl::MutexLock m(&mu_);
    if (abort_wait_ != nullptr) abort_wait_->store(true);
  }
  // Ends the pending WaitForUpdatesEx now instead of after maxWaitSeconds.
  CancelWaitsUntilExited(
      client_,
      [this] {
        absl::MutexLock m(&mu_);
        return waiting_collector_;
      },
      exited_, "inventory cache");
  thread_.join();
  DestroyServerObjects();
  absl::MutexLock m(&mu_);
  stats_.synced = false;
}

void InventoryCache::Interrupt() {
  absl::MutexLock m(&mu_);
  interrupted_ = true;
  if (abort_wait_ != nullptr) abort_wait_->store(true);
}

bool InventoryCache::TakeInterrupt() {
  absl::MutexLock m(&mu_);
  abort_wait_ = nullptr;
  return std::exchange(interrupted_, false);
}

bool InventoryCache::synced() const {
  absl::MutexLock l(&mu_);
  return stats_.synced;
}

bool InventoryCache::WaitForSync(absl::Duration timeout) const {
  absl::MutexLock l(&mu_);
  return mu_.AwaitWithTimeout(absl::Condition(&stats_.synced), timeout);
}

void InventoryCache::Run() {
  int failures = 0;
  absl::Time outage_start;
  absl::Time last_warning = absl::InfinitePast();
  while (!stopping()) {
    absl::Status s = Resync(/*first=*/stats().resyncs == 0 && failures == 0, failures);
    if (s.ok()) {
      if (failures > 0) {
        LOG_INFO("inventory cache of {}: synced again after {} ({} failed attempts)",
                 client_.options().url, absl::FormatDuration(clock_->Now() - outage_start),
                 failures);
      }
      failures = 0;
      s = Stream();
    }
    if (stopping()) break;
    if (IsNotAuthenticated(s)) client_.InvalidateSession(session_generation_);
    MarkBroken(s);
    absl::Duration d = BackoffDelay(options_.resync_backoff, failures, random_);
    absl::Time now = clock_->Now();
    if (failures == 0) outage_start = now;
    if (failures == 0 || now - last_warning >= options_.failure_log_period) {
      last_warning = now;
      LOG_WARN("inventory cache of {}: {}; {} resync attempt in {}", client_.options().url, s,
               failures == 0 ? "first"
                             : absl::StrCat("failing for ",
                                            absl::FormatDuration(now - outage_start), ", next"),
               absl::FormatDuration(d));
    } else {
      VLOG(1, "inventory cache of {}: {}; resync in {}", client_.options().url, s,
           absl::FormatDuration(d));
    }
    ++failures;
    clock_->SleepFor(d, &stop_);
  }
}

absl::Status InventoryCache::Resync(bool first, int failures) {
  if (!first) {
    // One cheap call with a short timeout before the real work: while vCenter is down or
    // blackholed, each attempt costs a refused connection or a few seconds, not minutes.
    absl::Status probe = client_.Probe(options_.probe_timeout);
    if (!probe.ok()) {
      absl::MutexLock l(&mu_);
      ++stats_.failed_attempts;
      return probe;
    }
  }
  absl::Status s = Load();
  if (!s.ok() && IsNotAuthenticated(s)) client_.InvalidateSession(client_.session_generation());
  if (!s.ok()) {
    absl::MutexLock l(&mu_);
    ++stats_.failed_attempts;
  }
  return s;
}

void InventoryCache::MarkBroken(const absl::Status& s) {
  absl::MutexLock l(&mu_);
  stats_.synced = false;
  stats_.last_error = s;
  ++stats_.stream_errors;
  waiting_collector_ = {};
}

void InventoryCache::DestroyServerObjects() {
  if (!collector_.empty()) {
    // Destroys the filters too.
    auto r = client_.Call("DestroyPropertyCollector", MorefXml("_this", collector_));
    if (!r.ok()) VLOG(2, "inventory cache: DestroyPropertyCollector: {}", r.status());
  }
  for (const Moref& v : views_) {
    absl::Status s = DestroyView(client_, v);
    if (!s.ok()) VLOG(2, "inventory cache: DestroyView {}: {}", v.value, s);
  }
  ForgetServerObjects();
}

void InventoryCache::ForgetServerObjects() {
  collector_ = {};
  views_.clear();
  filter_dc_.clear();
  version_.clear();
}

absl::Status InventoryCache::Load() {
  if (client_.session_generation() == session_generation_) {
    DestroyServerObjects();
  } else {
    // They belonged to a session that is gone (re-login, vCenter restart): vCenter dropped them
    // with it, and asking would only cost round trips.
    ForgetServerObjects();
  }
  const std::string what = absl::StrCat("load VM inventory of ", client_.options().url);
  auto sc = client_.GetServiceContent();
  if (!sc.ok()) return Annotate(sc.status(), what);
  auto dcs = WatchedDatacenters();
  if (!dcs.ok()) return Annotate(dcs.status(), what);
  CCM_RETURN_IF_ERROR(CreateServerObjects(sc->property_collector, *dcs, what));
  VmMap fresh;
  CCM_RETURN_IF_ERROR(FetchAll(fresh, what));
  std::vector<Event> events = Commit(std::move(fresh));
  LOG_INFO("inventory cache of {}: synced {} VMs in {} datacenter(s)", client_.options().url,
           stats().vms, dcs->size());
  // The load freed the previous map and many small per-VM documents: hand the free pages back to
  // the OS so they do not stay resident for the process's life (glibc keeps them otherwise).
  malloc_trim(0);
  Notify(events);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Datacenter>> InventoryCache::WatchedDatacenters() {
  auto all = ListDatacenters(client_);
  if (!all.ok()) return all.status();
  if (options_.datacenters.empty()) return *std::move(all);
  std::vector<Datacenter> dcs;
  for (const std::string& spec : options_.datacenters) {
    auto dc = SelectDatacenter(*all, spec);
    if (!dc.ok()) return dc.status();
    dcs.push_back(*std::move(dc));
  }
  return dcs;
}

absl::Status InventoryCache::CreateServerObjects(const Moref& default_collector,
                                                 const std::vector<Datacenter>& dcs,
                                                 const std::string& what) {
  // A collector of our own: WaitForUpdatesEx on the session's default collector would clash
  // with any other waiter on the same session.
  auto pc = client_.Call("CreatePropertyCollector", MorefXml("_this", default_collector));
  if (!pc.ok()) return Annotate(pc.status(), what);
  collector_ = ParseMoref(pc->returnval());
  if (collector_.empty()) return absl::InternalError(what + ": CreatePropertyCollector: no result");
  session_generation_ = client_.session_generation();  // the session these objects live in
  std::vector<std::string> paths = VmFactsPropertyPaths();
  if (options_.vm_disks) {
    for (std::string& p : VmDiskPropertyPaths()) paths.push_back(std::move(p));
  }
  for (const Datacenter& dc : dcs) {
    auto view = CreateContainerView(client_, dc.moref, {"VirtualMachine"}, true);
    if (!view.ok()) return Annotate(view.status(), absl::StrCat(what, ": datacenter ", dc.name));
    views_.push_back(*view);
    PropertyFilterSpec spec;
    spec.prop_set.push_back({"VirtualMachine", paths, false});
    spec.object_set.push_back(
        {*view, true, {TraversalSpec{"traverseView", "ContainerView", "view", false, {}}}});
    auto filter = client_.Call("CreateFilter", absl::StrCat(MorefXml("_this", collector_),
                                                            PropertyFilterSpecXml(spec, "spec"),
                                                            TextXml("partialUpdates", "false")));
    if (!filter.ok()) return Annotate(filter.status(), absl::StrCat(what, ": CreateFilter"));
    filter_dc_[ParseMoref(filter->returnval()).value] = {dc.moref, dc.name};
  }
  session_generation_ = client_.session_generation();
  return absl::OkStatus();
}

absl::Status InventoryCache::FetchAll(VmMap& fresh, const std::string& what) {
  // The first WaitForUpdatesEx (no version) returns the whole current state as "enter" updates;
  // a real vCenter pages it by maxObjectUpdates (truncated: ask again with that version).
  version_.clear();
  LoadHandler loader(fresh, filter_dc_);
  UpdateStreamParser parser(loader);
  do {
    if (stopping()) return absl::CancelledError("stopping");
    std::string args = MorefXml("_this", collector_);
    if (!version_.empty()) absl::StrAppend(&args, TextXml("version", version_));
    absl::StrAppend(&args, WaitOptionsXml(0));
    absl::Status s = client_.CallStreaming("WaitForUpdatesEx", args, parser);
    if (!s.ok()) return Annotate(s, what);
    if (!parser.has_updates()) break;
    version_ = parser.version();
    if (!parser.truncated()) break;
  } while (true);
  return absl::OkStatus();
}

std::vector<InventoryCache::Event> InventoryCache::Commit(VmMap fresh) {
  std::vector<Event> events;
  absl::MutexLock l(&mu_);
  for (const auto& [moid, vm] : vms_) {
    auto it = fresh.find(moid);
    if (it == fresh.end()) {
      events.push_back({moid, VmChangeKind::kRemoved});
    } else if (!SameFacts(vm, it->second)) {
      events.push_back({moid, VmChangeKind::kModified});
    }
  }
  for (const auto& [moid, vm] : fresh) {
    if (!vms_.contains(moid)) events.push_back({moid, VmChangeKind::kAdded});
  }
  vms_ = std::move(fresh);
  by_uuid_.clear();
  by_hostname_.clear();
  by_ip_.clear();
  for (const auto& [moid, vm] : vms_) Index(vm);
  stats_.synced = true;
  stats_.vms = vms_.size();
  ++stats_.resyncs;
  stats_.last_sync = clock_->Now();
  waiting_collector_ = collector_;
  return events;
}

std::string InventoryCache::WaitOptionsXml(int max_wait_seconds) const {
  std::string xml;
  if (max_wait_seconds > 0) xml = TextXml("maxWaitSeconds", absl::StrCat(max_wait_seconds));
  if (options_.max_object_updates > 0) {
    absl::StrAppend(&xml, TextXml("maxObjectUpdates", absl::StrCat(options_.max_object_updates)));
  }
  return xml.empty() ? xml : absl::StrCat("<options>", xml, "</options>");
}

absl::Status InventoryCache::Stream() {
  const std::string args_prefix = MorefXml("_this", collector_);
  const std::string options = WaitOptionsXml(options_.max_wait_seconds);
  while (!stopping()) {
    if (client_.session_generation() != session_generation_) {
      return absl::UnavailableError("vCenter session changed (re-login): filters are gone");
    }
    // These answers are small: collect one whole, so an answer that fails midway applies
    // nothing and the next attempt starts again from the same version.
    UpdateSetCollector collector;
    UpdateStreamParser parser(collector);
    std::atomic<bool> abort{false};
    {
      absl::MutexLock l(&mu_);
      abort_wait_ = &abort;
      if (interrupted_ || stop_.HasBeenNotified()) abort.store(true);
    }
    absl::Status s =
        abort.load()
            ? absl::OkStatus()
            : client_.CallStreaming(
                  "WaitForUpdatesEx",
                  absl::StrCat(args_prefix, TextXml("version", version_), options), parser,
                  absl::Seconds(options_.max_wait_seconds) + options_.wait_timeout_margin, &abort);
    if (TakeInterrupt()) {
      return absl::UnavailableError("credentials changed: setting up with the new session");
    }
    if (stopping()) return absl::OkStatus();
    if (!s.ok()) return s;
    UpdateSet set = collector.Take(parser);
    if (!set.has_updates) continue;
    std::vector<Event> events;
    {
      absl::MutexLock l(&mu_);
      CCM_RETURN_IF_ERROR(ApplyUpdateSet(set, &events));
    }
    Notify(events);
  }
  return absl::OkStatus();
}

absl::Status InventoryCache::ApplyUpdateSet(const UpdateSet& set, std::vector<Event>* events) {
  for (const FilterUpdate& f : set.filters) {
    for (const ObjectUpdate& u : f.objects) CCM_RETURN_IF_ERROR(SessionLost(u));
  }
  for (const FilterUpdate& f : set.filters) {
    for (const ObjectUpdate& u : f.objects) {
      auto it = vms_.find(u.obj.value);
      if (it != vms_.end()) Unindex(it->second);
      std::optional<VmChangeKind> kind = ApplyObject(vms_, u, filter_dc_, f.filter);
      it = vms_.find(u.obj.value);
      if (it != vms_.end()) Index(it->second);
      if (kind) {
        events->push_back({u.obj.value, *kind});
        ++stats_.updates_applied;
      }
    }
  }
  version_ = set.version;
  stats_.vms = vms_.size();
  return absl::OkStatus();
}

namespace {
void AddMoid(InventoryCache::MoidSet& set, const std::string& moid) {
  if (std::find(set.begin(), set.end(), moid) == set.end()) set.push_back(moid);
}
}  // namespace

void InventoryCache::Index(const VmFacts& vm) {
  const std::string& moid = vm.moref.value;
  if (!vm.bios_uuid.empty()) by_uuid_[absl::AsciiStrToLower(vm.bios_uuid)] = moid;
  if (!vm.guest_hostname.empty())
    AddMoid(by_hostname_[absl::AsciiStrToLower(vm.guest_hostname)], moid);
  for (const GuestNic& n : vm.nics) {
    for (const std::string& ip : n.ip_addresses) AddMoid(by_ip_[absl::AsciiStrToLower(ip)], moid);
  }
}

void InventoryCache::Unindex(const VmFacts& vm) {
  const std::string& moid = vm.moref.value;
  if (!vm.bios_uuid.empty()) {
    auto it = by_uuid_.find(absl::AsciiStrToLower(vm.bios_uuid));
    if (it != by_uuid_.end() && it->second == moid) by_uuid_.erase(it);
  }
  auto drop = [&](auto& index, const std::string& key) {
    auto it = index.find(key);
    if (it == index.end()) return;
    auto& set = it->second;
    set.erase(std::remove(set.begin(), set.end(), moid), set.end());
    if (set.empty()) index.erase(it);
  };
  if (!vm.guest_hostname.empty()) drop(by_hostname_, absl::AsciiStrToLower(vm.guest_hostname));
  for (const GuestNic& n : vm.nics) {
    for (const std::string& ip : n.ip_addresses) drop(by_ip_, absl::AsciiStrToLower(ip));
  }
}

void InventoryCache::Notify(const std::vector<Event>& events) {
  if (events.empty()) return;
  std::vector<std::shared_ptr<VmChangeListener>> listeners;
  {
    absl::MutexLock l(&listeners_mu_);
    for (const auto& [id, fn] : listeners_) listeners.push_back(fn);
  }
  for (const Event& e : events) {
    VLOG(4, "inventory cache: {} {}", e.moid, ToString(e.kind));
    for (const auto& fn : listeners) (*fn)(e.moid, e.kind);
  }
}

int InventoryCache::AddListener(VmChangeListener listener) {
  absl::MutexLock l(&listeners_mu_);
  int id = ++next_listener_;
  listeners_[id] = std::make_shared<VmChangeListener>(std::move(listener));
  return id;
}

void InventoryCache::RemoveListener(int id) {
  absl::MutexLock l(&listeners_mu_);
  listeners_.erase(id);
}

absl::Status InventoryCache::NotSynced() const {
  std::string why = stats_.last_error.ok() ? std::string("initial load not finished")
                                           : std::string(stats_.last_error.message());
  return absl::UnavailableError(
      absl::StrCat("VM inventory of ", client_.options().url, " is not synced: ", why));
}

std::vector<VmFacts> InventoryCache::Collect(const MoidSet* moids) const {
  std::vector<VmFacts> out;
  if (moids == nullptr) {
    out.reserve(vms_.size());
    for (const auto& [moid, vm] : vms_) out.push_back(vm);
  } else {
    for (const std::string& moid : *moids) {
      if (auto it = vms_.find(moid); it != vms_.end()) out.push_back(it->second);
    }
  }
  std::sort(out.begin(), out.end(),
            [](const VmFacts& a, const VmFacts& b) { return a.moref.value < b.moref.value; });
  return out;
}

absl::StatusOr<VmFacts> InventoryCache::FindByUuid(absl::string_view bios_uuid) const {
  absl::MutexLock l(&mu_);
  if (!stats_.synced) return NotSynced();
  auto it = by_uuid_.find(absl::AsciiStrToLower(bios_uuid));
  if (it == by_uuid_.end()) return absl::NotFoundError(absl::StrCat("no VM with uuid ", bios_uuid));
  return vms_.at(it->second);
}

absl::StatusOr<VmFacts> InventoryCache::FindByMoid(absl::string_view moid) const {
  absl::MutexLock l(&mu_);
  if (!stats_.synced) return NotSynced();
  auto it = vms_.find(moid);
  if (it == vms_.end()) return absl::NotFoundError(absl::StrCat("no VM ", moid));
  return it->second;
}

absl::StatusOr<std::vector<VmFacts>> InventoryCache::FindByHostname(
    absl::string_view hostname) const {
  absl::MutexLock l(&mu_);
  if (!stats_.synced) return NotSynced();
  auto it = by_hostname_.find(absl::AsciiStrToLower(hostname));
  if (it == by_hostname_.end()) {
    return absl::NotFoundError(absl::StrCat("no VM with guest hostname ", hostname));
  }
  return Collect(&it->second);
}

absl::StatusOr<std::vector<VmFacts>> InventoryCache::FindByIp(absl::string_view ip) const {
  absl::MutexLock l(&mu_);
  if (!stats_.synced) return NotSynced();
  auto it = by_ip_.find(absl::AsciiStrToLower(ip));
  if (it == by_ip_.end()) return absl::NotFoundError(absl::StrCat("no VM with IP ", ip));
  return Collect(&it->second);
}

absl::StatusOr<std::vector<VmFacts>> InventoryCache::Snapshot() const {
  absl::MutexLock l(&mu_);
  if (!stats_.synced) return NotSynced();
  return Collect(nullptr);
}

absl::Status InventoryCache::ForEachVm(const std::function<void(const VmFacts&)>& fn) const {
  absl::MutexLock l(&mu_);
  if (!stats_.synced) return NotSynced();
  for (const auto& [moid, vm] : vms_) fn(vm);
  return absl::OkStatus();
}

bool InventoryCache::WaitForStats(const std::function<bool(const InventoryCacheStats&)>& pred,
                                  absl::Duration timeout) const {
  absl::MutexLock l(&mu_);
  auto cond = [&]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return pred(stats_); };
  return mu_.AwaitWithTimeout(absl::Condition(&cond), timeout);
}

InventoryCacheStats InventoryCache::stats() const {
  absl::MutexLock l(&mu_);
  return stats_;
}

}  // namespace ccm::vsphere
