#include "testing/fake_controller.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "vsphere/cns/task.h"
#include "vsphere/cns/wire.h"

namespace ccm::csi::testing {
namespace {

namespace cns = vsphere::cns;

bool Matches(const std::vector<std::string>& wanted, const std::string& value) {
  return wanted.empty() || std::find(wanted.begin(), wanted.end(), value) != wanted.end();
}

bool InClusters(const std::vector<std::string>& wanted, const cns::VolumeMetadata& m) {
  if (wanted.empty()) return true;
  for (const cns::ContainerCluster& c : m.container_cluster_array) {
    if (Matches(wanted, c.cluster_id)) return true;
  }
  return Matches(wanted, m.container_cluster.cluster_id);
}

absl::Status NotFoundFault(const std::string& id) {
  return cns::FaultStatus("NotFound",
                          absl::StrCat("The object or item referred to could not be found: ", id));
}

// One page of `all` from the cursor's offset (CNS's paging); the answer's cursor.
template <typename T>
cns::Cursor Page(const std::vector<T>& all, const std::optional<cns::Cursor>& cursor,
                 int64_t default_limit, std::vector<T>& page) {
  const int64_t offset = cursor ? cursor->offset : 0;
  const int64_t limit = cursor && cursor->limit > 0 ? cursor->limit : default_limit;
  const int64_t total = static_cast<int64_t>(all.size());
  for (int64_t i = offset; i < std::min(total, offset + limit); ++i) page.push_back(all[i]);
  return {std::min(total, offset + limit), limit, total};
}

}  // namespace

void FakeCns::SetDatastoreUrl(const std::string& moid, const std::string& url) {
  absl::MutexLock l(&mu_);
  urls_[moid] = url;
}

void FakeCns::Fail(const std::string& method, absl::Status s, bool at_start, int count) {
  absl::MutexLock l(&mu_);
  failures_[method] = {std::move(s), at_start, count};
}

void FakeCns::VanishTask(const std::string& method) {
  absl::MutexLock l(&mu_);
  vanish_.insert(method);
}

std::string FakeCns::NewId() { return absl::StrFormat("5e0c3d7a-0000-4000-8000-%012d", next_++); }

std::string FakeCns::Add(const std::string& name, int64_t capacity_mb, const std::string& datastore,
                         const std::string& cluster_id, const std::string& policy_id) {
  absl::MutexLock l(&mu_);
  Stored s;
  s.volume.volume_id = NewId();
  s.volume.name = name;
  s.volume.volume_type = "BLOCK";
  s.volume.capacity_mb = capacity_mb;
  s.volume.datastore_url = urls_[datastore];
  s.volume.storage_policy_id = policy_id;
  s.volume.metadata.container_cluster.cluster_id = cluster_id;
  s.volume.metadata.container_cluster_array = {s.volume.metadata.container_cluster};
  s.datastore = datastore;
  volumes_[s.volume.volume_id] = s;
  return s.volume.volume_id;
}

void FakeCns::AttachTo(const std::string& volume_id, const std::string& vm_moid) {
  absl::MutexLock l(&mu_);
  Stored& s = volumes_.at(volume_id);
  s.attached_vm = vm_moid;
  s.disk_uuid = absl::StrCat("6000C29", volume_id.substr(volume_id.size() - 12), "0000000000000");
}

void FakeCns::HideName(const std::string& volume_id) {
  absl::MutexLock l(&mu_);
  unnamed_.insert(volume_id);
}

bool FakeCns::Delete(const std::string& volume_id) {
  absl::MutexLock l(&mu_);
  return volumes_.erase(volume_id) > 0;
}

void FakeCns::AddDisk(const std::string& url_path, const std::string& file_path,
                      int64_t capacity_mb, const std::string& datastore) {
  absl::MutexLock l(&mu_);
  disks_[url_path] = {file_path, capacity_mb, datastore};
}

absl::StatusOr<cns::VolumeOperationResult> FakeCns::Register(const cns::Operation& op) {
  auto disk = disks_.find(op.create.backing_disk_url_path);
  if (disk == disks_.end()) {
    return cns::FaultStatus(
        "FileNotFound", absl::StrCat("File ", op.create.backing_disk_url_path, " was not found"));
  }
  for (const auto& [id, s] : volumes_) {
    if (s.file_path != disk->second.file_path) continue;
    cns::VolumeOperationResult already;
    already.fault_name = "CnsAlreadyRegisteredFault";
    already.fault_message = "The input volume is already registered as a container volume.";
    already.fault_volume_id = id;
    return cns::ResultFaultStatus(already);
  }
  Stored s;
  s.volume.volume_id = NewId();
  s.volume.name = op.create.name;
  s.volume.volume_type = "BLOCK";
  s.volume.capacity_mb = disk->second.capacity_mb;
  s.volume.storage_policy_id = op.create.storage_policy_id;
  s.volume.metadata = op.create.metadata;
  s.datastore = disk->second.datastore;
  s.volume.datastore_url = urls_[s.datastore];
  s.file_path = disk->second.file_path;
  volumes_[s.volume.volume_id] = s;
  cns::VolumeOperationResult r;
  r.volume_id = s.volume.volume_id;
  r.placement = {vsphere::Moref{"Datastore", s.datastore}};
  return r;
}

absl::Status FakeCns::KeepAfterVmDeletion(const std::string& volume_id,
                                          const vsphere::Moref& datastore) {
  absl::MutexLock l(&mu_);
  ++calls_["SetVStorageObjectControlFlags"];
  if (auto it = failures_.find("SetVStorageObjectControlFlags");
      it != failures_.end() && it->second.count != 0) {
    --it->second.count;
    return it->second.status;
  }
  auto it = volumes_.find(volume_id);
  if (it == volumes_.end() || it->second.datastore != datastore.value) {
    return cns::FaultStatus("NotFound", absl::StrCat("disk ", volume_id, " on ", datastore.value));
  }
  it->second.keep_after_delete_vm = true;
  return absl::OkStatus();
}

std::optional<FakeCns::Stored> FakeCns::Get(const std::string& volume_id) const {
  absl::MutexLock l(&mu_);
  auto it = volumes_.find(volume_id);
  if (it == volumes_.end()) return std::nullopt;
  return it->second;
}

std::vector<FakeCns::Stored> FakeCns::All() const {
  absl::MutexLock l(&mu_);
  std::vector<Stored> out;
  for (const auto& [id, s] : volumes_) out.push_back(s);
  return out;
}

int FakeCns::Calls(const std::string& method) const {
  absl::MutexLock l(&mu_);
  auto it = calls_.find(method);
  return it == calls_.end() ? 0 : it->second;
}

absl::StatusOr<cns::QueryResult> FakeCns::QueryVolume(const cns::QueryFilter& filter) {
  absl::MutexLock l(&mu_);
  ++calls_["CnsQueryVolume"];
  if (auto it = failures_.find("CnsQueryVolume"); it != failures_.end() && it->second.count != 0) {
    --it->second.count;
    return it->second.status;
  }
  std::vector<cns::Volume> all;
  for (const auto& [id, s] : volumes_) {
    if (!filter.names.empty() && unnamed_.contains(id)) continue;  // not listed by name yet
    if (Matches(filter.volume_ids, id) && Matches(filter.names, s.volume.name) &&
        InClusters(filter.container_cluster_ids, s.volume.metadata)) {
      all.push_back(s.volume);
    }
  }
  cns::QueryResult out;
  out.cursor = Page(all, filter.cursor, 100, out.volumes);
  return out;
}

std::vector<cns::Snapshot> FakeCns::SnapshotsOfVolume(const std::string& volume_id) const {
  absl::MutexLock l(&mu_);
  auto it = snapshots_.find(volume_id);
  return it == snapshots_.end() ? std::vector<cns::Snapshot>() : it->second;
}

void FakeCns::SetSnapshotApi(bool on) {
  absl::MutexLock l(&mu_);
  snapshot_api_ = on;
}

absl::StatusOr<bool> FakeCns::SnapshotsSupported() {
  absl::MutexLock l(&mu_);
  return snapshot_api_;
}

void FakeCns::SetApiVersion(const std::string& v) {
  absl::MutexLock l(&mu_);
  api_version_ = v;
}

absl::StatusOr<std::string> FakeCns::ApiVersion() {
  absl::MutexLock l(&mu_);
  return api_version_;
}

namespace {
absl::Status NoSnapshotApi(absl::string_view method) {
  return absl::UnimplementedError(
      absl::StrCat("this vCenter has no CNS snapshot API (", method, " is unknown to it)"));
}
}  // namespace

absl::StatusOr<cns::SnapshotQueryResult> FakeCns::QuerySnapshots(
    const cns::SnapshotQueryFilter& filter) {
  absl::MutexLock l(&mu_);
  ++calls_["CnsQuerySnapshots"];
  if (!snapshot_api_) return NoSnapshotApi("CnsQuerySnapshots");
  if (auto it = failures_.find("CnsQuerySnapshots");
      it != failures_.end() && it->second.count != 0) {
    --it->second.count;
    return it->second.status;
  }
  std::vector<cns::SnapshotQueryEntry> all;
  auto add_volume = [&](const std::string& volume_id,
                        const std::string& snapshot_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (!volumes_.contains(volume_id)) {
      all.push_back({{}, "CnsVolumeNotFoundFault", absl::StrCat("volume ", volume_id)});
      return;
    }
    bool found = false;
    for (const cns::Snapshot& snap : snapshots_[volume_id]) {
      if (!snapshot_id.empty() && snap.snapshot_id != snapshot_id) continue;
      all.push_back({snap, "", ""});
      found = true;
    }
    if (!snapshot_id.empty() && !found) {
      all.push_back({{}, "CnsSnapshotNotFoundFault", absl::StrCat("snapshot ", snapshot_id)});
    }
  };
  if (filter.specs.empty()) {
    for (const auto& [id, unused] : volumes_) add_volume(id, "");
  }
  for (const cns::SnapshotQuerySpec& spec : filter.specs)
    add_volume(spec.volume_id, spec.snapshot_id);
  cns::SnapshotQueryResult out;
  out.cursor = Page(all, filter.cursor, 128, out.entries);
  return out;
}

absl::StatusOr<vsphere::Moref> FakeCns::Start(const cns::Operation& op) {
  absl::MutexLock l(&mu_);
  ++calls_[op.method];
  if (!snapshot_api_ && absl::StrContains(op.method, "Snapshots")) return NoSnapshotApi(op.method);
  auto it = failures_.find(op.method);
  const bool fail = it != failures_.end() && it->second.count != 0;
  if (fail && it->second.at_start) {
    --it->second.count;
    return it->second.status;
  }
  const vsphere::Moref task{"Task", absl::StrCat("task-", next_++)};
  if (fail) {
    --it->second.count;
    tasks_[task.value] = it->second.status;
  } else {
    tasks_[task.value] = Apply(op);
  }
  if (vanish_.erase(op.method) > 0) tasks_.erase(task.value);
  return task;
}

absl::StatusOr<cns::VolumeOperationResult> FakeCns::Wait(const vsphere::Moref& task,
                                                         absl::string_view what) {
  absl::MutexLock l(&mu_);
  auto it = tasks_.find(task.value);
  if (it == tasks_.end()) return cns::TaskVanishedError(task);
  return it->second;
}

absl::StatusOr<std::string> FakeCns::AttachedDiskUuid(const vsphere::Moref& vm,
                                                      const std::string& volume_id) {
  absl::MutexLock l(&mu_);
  auto it = volumes_.find(volume_id);
  if (it == volumes_.end() || it->second.attached_vm != vm.value) return std::string();
  return it->second.disk_uuid;
}

absl::StatusOr<cns::VolumeOperationResult> FakeCns::Apply(const cns::Operation& op) {
  if (absl::StartsWith(op.method, "CnsCreateSnapshot") ||
      absl::StartsWith(op.method, "CnsDeleteSnapshot")) {
    return ApplySnapshot(op);
  }
  cns::VolumeOperationResult r;
  if (op.method == "CnsCreateVolume" && !op.create.backing_disk_url_path.empty()) {
    return Register(op);
  }
  if (op.method == "CnsCreateVolume") {
    const std::string& given = op.create.volume_id;  // CNS transactions (9.1)
    if (!given.empty() && !cns::HasTransactions(api_version_)) {
      return cns::FaultStatus("InvalidRequest", "unexpected element volumeId");
    }
    if (!given.empty() && volumes_.contains(given)) {
      cns::VolumeOperationResult exists;
      exists.fault_name = "CnsVolumeAlreadyExistsFault";
      exists.fault_message = absl::StrCat("A volume with ID ", given, " already exists.");
      exists.fault_volume_id = given;
      return cns::ResultFaultStatus(exists);
    }
    Stored s;
    s.volume.volume_id = given.empty() ? NewId() : given;
    s.volume.name = op.create.name;
    s.volume.volume_type = "BLOCK";
    s.volume.capacity_mb = op.create.capacity_mb;
    s.volume.storage_policy_id = op.create.storage_policy_id;
    s.volume.metadata = op.create.metadata;
    if (!op.create.datastores.empty()) s.datastore = op.create.datastores.front().value;
    if (!op.create.source_snapshot_id.empty()) {  // CNS: the snapshot's datastore and size
      auto src = volumes_.find(op.create.source_volume_id);
      if (src == volumes_.end()) return NotFoundFault(op.create.source_volume_id);
      s.datastore = src->second.datastore;
      s.volume.capacity_mb = src->second.volume.capacity_mb;
    }
    s.volume.datastore_url = urls_[s.datastore];
    volumes_[s.volume.volume_id] = s;
    r.volume_id = s.volume.volume_id;
    r.placement = {vsphere::Moref{"Datastore", s.datastore}};
    return r;
  }
  auto it = volumes_.find(op.volume_id);
  if (it == volumes_.end()) return NotFoundFault(op.volume_id);
  Stored& v = it->second;
  r.volume_id = op.volume_id;
  if (op.method == "CnsDeleteVolume") {
    if (!snapshots_[op.volume_id].empty()) {
      return cns::FaultStatus("CnsFault", absl::StrCat("volume ", op.volume_id, " has snapshots"));
    }
    if (op.delete_disk && !v.attached_vm.empty()) {
      return cns::FaultStatus(
          "ResourceInUse",
          absl::StrCat("The resource 'volume' is in use: ", op.volume_id, " is attached"));
    }
    volumes_.erase(it);
  } else if (op.method == "CnsQueryVolumeInfo") {
    r.backing.file_path = v.file_path.empty()
                              ? absl::StrCat("[", v.datastore, "] fcd/", op.volume_id, ".vmdk")
                              : v.file_path;
    r.backing.datastore = {"Datastore", v.datastore};
    // A disk CNS made has the flag from the start; a registered VMDK gets it when set.
    r.backing.keep_after_delete_vm = v.keep_after_delete_vm || v.file_path.empty();
  } else if (op.method == "CnsAttachVolume") {
    if (!v.attached_vm.empty()) {
      return cns::FaultStatus("ResourceInUse",
                              absl::StrCat("The resource 'volume' is in use: ", op.volume_id,
                                           " is attached to ", v.attached_vm));
    }
    v.attached_vm = op.vm.value;
    v.disk_uuid =
        absl::StrCat("6000C29", op.volume_id.substr(op.volume_id.size() - 12), "0000000000000");
    r.disk_uuid = v.disk_uuid;
  } else if (op.method == "CnsDetachVolume") {
    if (v.attached_vm != op.vm.value) {
      return cns::FaultStatus("CnsFault",
                              absl::StrCat(op.volume_id, " is not attached to ", op.vm.value));
    }
    v.attached_vm.clear();
  } else if (op.method == "CnsExtendVolume") {
    if (op.capacity_mb < v.volume.capacity_mb) {
      return cns::FaultStatus("InvalidArgument", "capacity smaller than the volume's");
    }
    v.volume.capacity_mb = op.capacity_mb;
  } else if (op.method == "CnsUpdateVolumeMetadata") {
    v.volume.metadata.entity_metadata = op.metadata.entity_metadata;
  }
  return r;
}

absl::StatusOr<cns::VolumeOperationResult> FakeCns::ApplySnapshot(const cns::Operation& op) {
  if (!volumes_.contains(op.volume_id)) {
    return cns::FaultStatus("CnsVolumeNotFoundFault", absl::StrCat("volume ", op.volume_id));
  }
  std::vector<cns::Snapshot>& snaps = snapshots_[op.volume_id];
  cns::VolumeOperationResult r;
  r.volume_id = op.volume_id;
  if (op.method == "CnsCreateSnapshots") {
    if (snaps.size() >= 32) {
      return cns::FaultStatus("CnsFault", "the volume has 32 snapshots, vCenter's maximum");
    }
    r.type = "CnsSnapshotCreateResult";
    r.snapshot = {NewId(), op.volume_id, op.description, absl::FromUnixSeconds(1800000000 + next_)};
    snaps.push_back(r.snapshot);
    return r;
  }
  auto it = std::find_if(snaps.begin(), snaps.end(),
                         [&](const cns::Snapshot& s) { return s.snapshot_id == op.snapshot_id; });
  if (it == snaps.end()) {
    return cns::FaultStatus("CnsSnapshotNotFoundFault",
                            absl::StrCat("snapshot ", op.snapshot_id, " of volume ", op.volume_id));
  }
  snaps.erase(it);
  r.type = "CnsSnapshotDeleteResult";
  r.snapshot_id = op.snapshot_id;
  return r;
}

std::string FakeVms::Add(const std::string& name, const std::string& uuid,
                         const std::string& host) {
  vsphere::VmFacts f;
  f.moref = {"VirtualMachine", absl::StrCat("vm-", vms_.size() + 1)};
  f.name = name;
  f.guest_hostname = name;
  f.bios_uuid = absl::AsciiStrToLower(uuid);
  f.host = {"HostSystem", host};
  vms_.push_back(f);
  return f.moref.value;
}

void FakeVms::HoldStream() {
  held_.emplace();
  for (const vsphere::VmFacts& f : vms_) (*held_)[f.moref.value] = WithDisks(f).disks;
}

vsphere::VmFacts FakeVms::WithDisks(vsphere::VmFacts f) const {
  if (held_.has_value()) {
    auto it = held_->find(f.moref.value);
    if (it != held_->end()) f.disks = it->second;
    return f;
  }
  for (const FakeCns::Stored& s : cns_.All()) {
    if (s.attached_vm == f.moref.value) f.disks.push_back({s.volume.volume_id, s.disk_uuid});
  }
  return f;
}

absl::StatusOr<vsphere::VmFacts> FakeVms::FindByUuid(absl::string_view bios_uuid) {
  if (!unavailable_.ok()) return unavailable_;
  for (const vsphere::VmFacts& f : vms_) {
    if (absl::EqualsIgnoreCase(f.bios_uuid, bios_uuid)) return WithDisks(f);
  }
  return absl::NotFoundError(absl::StrCat("no VM with BIOS UUID ", bios_uuid));
}

absl::StatusOr<std::vector<vsphere::VmFacts>> FakeVms::FindByHostname(absl::string_view hostname) {
  if (!unavailable_.ok()) return unavailable_;
  std::vector<vsphere::VmFacts> out;
  for (const vsphere::VmFacts& f : vms_) {
    if (absl::EqualsIgnoreCase(f.guest_hostname, hostname)) out.push_back(WithDisks(f));
  }
  return out;
}

absl::Status FakeVms::ForEachVm(const std::function<void(const vsphere::VmFacts&)>& fn) {
  if (!unavailable_.ok()) return unavailable_;
  for (const vsphere::VmFacts& f : vms_) fn(WithDisks(f));
  return absl::OkStatus();
}

absl::StatusOr<AttachmentMap> FakeVms::Attachments() {
  if (!unavailable_.ok()) return unavailable_;
  AttachmentMap out;
  for (const FakeCns::Stored& s : cns_.All()) {
    if (s.attached_vm.empty()) continue;
    std::string uuid;
    for (const vsphere::VmFacts& f : vms_) {
      if (f.moref.value == s.attached_vm) uuid = f.bios_uuid;
    }
    out[s.volume.volume_id].push_back({{"VirtualMachine", s.attached_vm}, uuid});
  }
  return out;
}

absl::StatusOr<std::string> FakePolicies::IdOf(const std::string& name) {
  auto it = ids_.find(name);
  if (it == ids_.end()) {
    return absl::NotFoundError(absl::StrCat("no storage policy \"", name, "\" in vCenter vc1"));
  }
  return it->second;
}

absl::StatusOr<std::set<std::string>> FakePolicies::Compatible(
    const std::string& profile_id, const std::vector<std::string>& datastores) {
  std::set<std::string> out;
  for (const std::string& d : datastores) {
    if (compatible_[profile_id].contains(d)) out.insert(d);
  }
  return out;
}

absl::StatusOr<PlacementView::SnapshotPtr> FakePlacement::Snapshot() const {
  if (!unavailable_.ok()) return unavailable_;
  return std::make_shared<const InventorySnapshot>(view_);
}

FakeControllerCloud::FakeControllerCloud() : operations_(NewMemoryOperationStore()) {
  cfg.global.cluster_id = kClusterId;
  cloud::VirtualCenterConfig vc;
  vc.label = kVCenter;
  vc.server = kVCenter;
  vc.user = "k8s@vsphere.local";
  cfg.vcenters.push_back(vc);
  endpoints_.push_back({kVCenter, "k8s@vsphere.local", &cns, &vms, &policies});
  const Segments a = {{"failure-domain.beta.kubernetes.io/zone", "zone-a"},
                      {"failure-domain.beta.kubernetes.io/region", "region-1"}};
  const Segments b = {{"failure-domain.beta.kubernetes.io/zone", "zone-b"},
                      {"failure-domain.beta.kubernetes.io/region", "region-1"}};
  InventorySnapshot& v = placement.view();
  v.hosts = {{kVCenter, "host-1", "esx-1", a},
             {kVCenter, "host-2", "esx-2", a},
             {kVCenter, "host-3", "esx-3", b}};
  constexpr int64_t kGiB = int64_t{1} << 30;
  auto ds = [&](const std::string& name, const std::string& moid, int64_t free_gib,
                std::vector<std::string> hosts) {
    DatastoreCandidate c;
    c.vcenter = kVCenter;
    c.datacenter = "dc1";
    c.name = name;
    c.moref = moid;
    c.url = absl::StrCat("ds:///vmfs/volumes/", name, "/");
    c.type = "VMFS";
    c.free_bytes = free_gib * kGiB;
    c.hosts = std::move(hosts);
    cns.SetDatastoreUrl(moid, c.url);
    v.datastores.push_back(c);
  };
  ds("shared-a", "datastore-1", 100, {"host-1", "host-2"});
  ds("local-1", "datastore-2", 500, {"host-1"});
  ds("shared-all", "datastore-3", 50, {"host-1", "host-2", "host-3"});
  node1_uuid = "4237aaaa-0000-0000-0000-000000000001";
  node2_uuid = "4237aaaa-0000-0000-0000-000000000002";
  node1_moid = vms.Add("node-1", node1_uuid, "host-1");
  node2_moid = vms.Add("node-2", node2_uuid, "host-2");
  node_vms.nodes = {{"node-1", node1_uuid}, {"node-2", node2_uuid}};
}

void FakeControllerCloud::WithZones() {
  cfg.labels.zone = "k8s-zone";
  cfg.labels.region = "k8s-region";
  topo.zone_category = "k8s-zone";
  topo.region_category = "k8s-region";
}

InTreeRegistrarOptions FakeControllerCloud::RegistrarOptions() {
  InTreeRegistrarOptions o;
  o.vcenter_host = "vc1.example.com";
  o.datacenters = []() -> absl::StatusOr<std::vector<std::string>> {
    return std::vector<std::string>{"/dc1"};
  };
  o.cluster.cluster_id = kClusterId;
  return o;
}

}  // namespace ccm::csi::testing
