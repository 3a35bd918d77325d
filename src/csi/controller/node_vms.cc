#include "csi/controller/node_vms.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "cloud/core/provider_id.h"
#include "common/status_macros.h"
#include "csi/core/constants.h"
#include "csi/core/node_id.h"
#include "csi/core/volume_id.h"
#include "kube/objects.h"
#include "kube/resource.h"

namespace ccm::csi {
namespace {

// Only what List() reads: a Node cache of thousands stays small.
void Trim(kube::Json& node) {
  kube::Json out = {{"metadata",
                     {{"name", node["metadata"].value("name", "")},
                      {"resourceVersion", node["metadata"].value("resourceVersion", "")}}}};
  if (node.contains("spec") && node["spec"].contains("providerID")) {
    out["spec"]["providerID"] = node["spec"]["providerID"];
  }
  node = std::move(out);
}

// A CSINode: its name and this driver's entry (name, nodeID and allocatable count) only.
void TrimCsiNode(kube::Json& csinode) {
  kube::Json out = {{"metadata",
                     {{"name", csinode["metadata"].value("name", "")},
                      {"resourceVersion", csinode["metadata"].value("resourceVersion", "")}}}};
  for (const kube::Json& d : csinode.value("/spec/drivers"_json_pointer, kube::Json::array())) {
    if (d.value("name", "") != kDriverName) continue;
    kube::Json ours = {{"name", std::string(kDriverName)}, {"nodeID", d.value("nodeID", "")}};
    const kube::Json count = d.value("/allocatable/count"_json_pointer, kube::Json());
    if (count.is_number_integer()) ours["allocatable"]["count"] = count;
    out["spec"]["drivers"] = kube::Json::array({std::move(ours)});
  }
  csinode = std::move(out);
}

// A PV: its name and CSI driver only, and a file volume's handle (FileHandleOf).
void TrimPv(kube::Json& pv) {
  kube::Json out = {{"metadata",
                     {{"name", pv["metadata"].value("name", "")},
                      {"resourceVersion", pv["metadata"].value("resourceVersion", "")}}}};
  if (pv.contains("spec") && pv["spec"].contains("csi")) {
    const kube::Json& csi = pv["spec"]["csi"];
    out["spec"]["csi"]["driver"] = csi.value("driver", "");
    const std::string handle = csi.value("volumeHandle", "");
    if (IsFileVolumeId(handle)) out["spec"]["csi"]["volumeHandle"] = handle;
  }
  pv = std::move(out);
}

}  // namespace

DriverPvs::DriverPvs(kube::Client& client) {
  kube::InformerOptions o;
  o.transform = TrimPv;
  o.compact_store = true;  // tens of thousands of PVs: ~100 bytes each
  informer_ = std::make_unique<kube::Informer>(client, kube::PersistentVolumes(), o);
}

void DriverPvs::Start() { informer_->Start(); }
void DriverPvs::Stop() { informer_->Stop(); }

std::string DriverPvs::FileHandleOf(const std::string& pv_name) const {
  kube::ObjectPtr pv = informer_->Get(pv_name);
  if (pv == nullptr) return "";
  return pv->value("/spec/csi/volumeHandle"_json_pointer, std::string());
}

absl::StatusOr<std::map<std::string, std::vector<std::string>>> AttachedFileVolumes(
    kube::Client& client, const DriverPvs& pvs) {
  CCM_ASSIGN_OR_RETURN(kube::ListResult vas, client.List(kube::VolumeAttachments(), "", {}));
  std::map<std::string, std::vector<std::string>> out;
  for (const kube::Json& va : vas.items) {
    if (va.value("/spec/attacher"_json_pointer, std::string()) != kDriverName ||
        !va.value("/status/attached"_json_pointer, false)) {
      continue;
    }
    const std::string handle =
        pvs.FileHandleOf(va.value("/spec/source/persistentVolumeName"_json_pointer, std::string()));
    if (!handle.empty()) out[handle].push_back(va.value("/spec/nodeName"_json_pointer, ""));
  }
  return out;
}

absl::StatusOr<size_t> DriverPvs::Count() const {
  if (!informer_->HasSynced()) {
    return absl::UnavailableError("the PersistentVolume informer has not listed the PVs yet");
  }
  size_t n = 0;
  for (const std::string& key : informer_->Keys()) {  // one PV decoded at a time
    kube::ObjectPtr pv = informer_->Get(key);
    n += pv != nullptr &&
         pv->value("/spec/csi/driver"_json_pointer, std::string()) == "csi.vsphere.vmware.com";
  }
  return n;
}

NodeVms::NodeVms(kube::Client& client) {
  kube::InformerOptions o;
  o.transform = Trim;
  informer_ = std::make_unique<kube::Informer>(client, kube::Nodes(), o);
  kube::InformerOptions co;
  co.transform = TrimCsiNode;
  csinodes_ = std::make_unique<kube::Informer>(client, kube::CsiNodes(), co);
}

void NodeVms::Start() {
  informer_->Start();
  csinodes_->Start();
}

void NodeVms::Stop() {
  informer_->Stop();
  csinodes_->Stop();
}

std::map<std::string, std::string> NodeVms::Known() const {
  std::map<std::string, std::string> out;
  for (const kube::ObjectPtr& c : csinodes_->List()) {
    absl::StatusOr<NodeRef> id = ParseNodeId(
        c->value("/spec/drivers/0/nodeID"_json_pointer, std::string()));  // Trim keeps ours only
    // A node-name ID (use-csinode-id off) says nothing of the VM: the providerID tells.
    if (id.ok() && id->kind == NodeRef::Kind::kVmUuid) out[kube::Name(*c)] = id->value;
  }
  for (const kube::ObjectPtr& n : informer_->List()) {
    absl::StatusOr<std::string> uuid = cloud::ParseProviderId(kube::ProviderId(*n));
    if (uuid.ok()) out.emplace(kube::Name(*n), *uuid);  // a CSINode's ID wins
  }
  return out;
}

std::optional<int64_t> NodeVms::VolumeLimit(const std::string& node_id) const {
  for (const kube::ObjectPtr& c : csinodes_->List()) {
    const kube::Json& ours = c->value("/spec/drivers/0"_json_pointer, kube::Json());  // Trim
    if (!ours.is_object() || !absl::EqualsIgnoreCase(ours.value("nodeID", ""), node_id)) continue;
    const kube::Json count = ours.value("/allocatable/count"_json_pointer, kube::Json());
    if (count.is_number_integer()) return count.get<int64_t>();
  }
  return std::nullopt;
}

absl::StatusOr<std::vector<NodeVmRef>> NodeVms::List() const {
  if (!informer_->HasSynced()) {
    return absl::UnavailableError("the Node informer has not listed the cluster's Nodes yet");
  }
  if (!csinodes_->HasSynced()) {
    return absl::UnavailableError("the CSINode informer has not listed the cluster's CSINodes yet");
  }
  std::vector<NodeVmRef> out;
  for (auto& [node, uuid] : Known()) out.push_back({node, uuid});
  return out;
}

std::vector<std::string> NodeVms::unknown() const {
  const std::map<std::string, std::string> known = Known();
  std::vector<std::string> out;
  for (const kube::ObjectPtr& n : informer_->List()) {
    if (!known.contains(kube::Name(*n))) out.push_back(kube::Name(*n));
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace ccm::csi
