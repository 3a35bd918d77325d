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

}  // namespace

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
