#include "csi/controller/node_vms.h"

#include "cloud/core/provider_id.h"
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

// A PV: its name and CSI driver only.
void TrimPv(kube::Json& pv) {
  kube::Json out = {{"metadata",
                     {{"name", pv["metadata"].value("name", "")},
                      {"resourceVersion", pv["metadata"].value("resourceVersion", "")}}}};
  if (pv.contains("spec") && pv["spec"].contains("csi")) {
    out["spec"]["csi"]["driver"] = pv["spec"]["csi"].value("driver", "");
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
}

void NodeVms::Start() { informer_->Start(); }
void NodeVms::Stop() { informer_->Stop(); }

absl::StatusOr<std::vector<NodeVmRef>> NodeVms::List() const {
  if (!informer_->HasSynced()) {
    return absl::UnavailableError("the Node informer has not listed the cluster's Nodes yet");
  }
  std::vector<NodeVmRef> out;
  for (const kube::ObjectPtr& n : informer_->List()) {
    absl::StatusOr<std::string> uuid = cloud::ParseProviderId(kube::ProviderId(*n));
    if (uuid.ok()) out.push_back({kube::Name(*n), *uuid});
  }
  return out;
}

size_t NodeVms::without_provider_id() const {
  size_t n = 0;
  for (const kube::ObjectPtr& node : informer_->List()) {
    if (!cloud::ParseProviderId(kube::ProviderId(*node)).ok()) ++n;
  }
  return n;
}

}  // namespace ccm::csi
