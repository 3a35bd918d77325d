#include "csi/crd/csinodetopology.h"

namespace ccm::csi {
namespace {

const kube::Json* Member(const kube::Json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

std::string StringOf(const kube::Json* j, const char* key) {
  const kube::Json* m = j ? Member(*j, key) : nullptr;
  return m && m->is_string() ? m->get<std::string>() : "";
}

}  // namespace

const kube::Resource& CsiNodeTopologies() {
  static const auto* r = new kube::Resource{"cns.vmware.com", "v1alpha1", "csinodetopologies",
                                            "CSINodeTopology", /*namespaced=*/false};
  return *r;
}

CsiNodeTopology ParseCsiNodeTopology(const kube::Json& obj) {
  CsiNodeTopology out;
  const kube::Json* meta = Member(obj, "metadata");
  out.name = StringOf(meta, "name");
  out.resource_version = StringOf(meta, "resourceVersion");
  const kube::Json* spec = Member(obj, "spec");
  out.node_id = StringOf(spec, "nodeID");
  out.node_uuid = StringOf(spec, "nodeuuid");
  const kube::Json* status = Member(obj, "status");
  out.status.status = StringOf(status, "status");
  out.status.error_message = StringOf(status, "errorMessage");
  const kube::Json* labels = status ? Member(*status, "topologyLabels") : nullptr;
  if (labels && labels->is_array()) {
    for (const kube::Json& l : *labels) {
      std::string key = StringOf(&l, "key");
      if (!key.empty()) out.status.labels.emplace_back(std::move(key), StringOf(&l, "value"));
    }
  }
  return out;
}

kube::Json NewCsiNodeTopology(const std::string& node, const std::string& node_uid,
                              const std::string& node_uuid) {
  kube::Json obj = {
      {"apiVersion", CsiNodeTopologies().api_version()},
      {"kind", CsiNodeTopologies().kind},
      {"metadata", {{"name", node}}},
      {"spec", {{"nodeID", node}, {"nodeuuid", node_uuid}}},
  };
  if (!node_uid.empty()) {
    obj["metadata"]["ownerReferences"] = kube::Json::array(
        {{{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}, {"uid", node_uid}}});
  }
  return obj;
}

kube::Json WithStatus(kube::Json obj, const NodeTopologyStatus& status) {
  kube::Json s = kube::Json::object();
  s["status"] = status.status;
  if (!status.error_message.empty()) s["errorMessage"] = status.error_message;
  kube::Json labels = kube::Json::array();
  for (const auto& [k, v] : status.labels) labels.push_back({{"key", k}, {"value", v}});
  s["topologyLabels"] = std::move(labels);
  obj["status"] = std::move(s);
  return obj;
}

}  // namespace ccm::csi
