#include "app/shared/diagnose_cluster.h"

#include "absl/strings/str_cat.h"
#include "cloud/core/node_labels.h"
#include "cloud/core/provider_id.h"
#include "diagnose/vcenter_probe.h"
#include "kube/resource.h"

namespace ccm::app {

std::unique_ptr<kube::RestClient> DiagnoseKubeClient(const std::string& master,
                                                     const std::string& kubeconfig,
                                                     diagnose::Report& report) {
  absl::StatusOr<kube::Config> kc = kube::BuildConfig(master, kubeconfig);
  absl::StatusOr<std::unique_ptr<kube::RestClient>> client =
      kc.ok() ? kube::RestClient::New(*kc)
              : absl::StatusOr<std::unique_ptr<kube::RestClient>>(kc.status());
  if (!client.ok()) {
    report.Warn("kubernetes", absl::StrCat("no Kubernetes API: ", client.status().message()),
                "pass --kubeconfig (or run in the cluster) to check Nodes, Secrets and volumes");
    return nullptr;
  }
  return *std::move(client);
}

absl::StatusOr<std::vector<kube::Json>> ListAll(kube::Client& client, const kube::Resource& r) {
  std::vector<kube::Json> out;
  kube::ListOptions o;
  o.limit = 500;
  do {
    absl::StatusOr<kube::ListResult> page = client.List(r, "", o);
    if (!page.ok()) return page.status();
    for (kube::Json& n : page->items) out.push_back(std::move(n));
    o.continue_token = page->continue_token;
  } while (!o.continue_token.empty());
  return out;
}

std::optional<std::vector<kube::Json>> DiagnoseListNodes(kube::Client& client,
                                                         diagnose::Report& report) {
  absl::StatusOr<std::vector<kube::Json>> nodes = ListAll(client, kube::Nodes());
  if (!nodes.ok()) {
    report.Error("kubernetes", absl::StrCat("cannot list Nodes: ", nodes.status().message()),
                 "check the kubeconfig, the API server and that the component's account may "
                 "list Nodes");
    return std::nullopt;
  }
  report.Ok("kubernetes", absl::StrCat("API server answers: ", nodes->size(), " Node",
                                       nodes->size() == 1 ? "" : "s"));
  return *std::move(nodes);
}

diagnose::NodeFacts NodeFactsOf(const kube::Json& node) {
  diagnose::NodeFacts f;
  const kube::Json empty = kube::Json::object();
  const kube::Json& meta = node.value("metadata", empty);
  f.name = meta.value("name", "");
  f.provider_id = node.value("spec", empty).value("providerID", "");
  for (const kube::Json& t : node.value("spec", empty).value("taints", kube::Json::array())) {
    if (t.value("key", "") == "node.cloudprovider.kubernetes.io/uninitialized") {
      f.uninitialized_taint = true;
    }
  }
  const kube::Json& labels = meta.value("labels", empty);
  f.zone = labels.value(std::string(cloud::kZoneLabel), "");
  f.region = labels.value(std::string(cloud::kRegionLabel), "");
  return f;
}

std::vector<std::string> NodeVmUuids(const std::vector<kube::Json>& nodes) {
  std::vector<std::string> out;
  for (const kube::Json& n : nodes) {
    absl::StatusOr<std::string> uuid = cloud::ParseProviderId(NodeFactsOf(n).provider_id);
    if (uuid.ok()) out.push_back(*uuid);
  }
  return out;
}

bool DiagnoseVcenters(const cloud::Config& config, vsphere::CredentialSource& creds,
                      const diagnose::VcenterCheckOptions& options, diagnose::Report& report) {
  bool all = true;
  for (const cloud::VirtualCenterConfig& vc : config.vcenters) {
    all = diagnose::CheckVcenter(vc, creds, options, report) && all;
  }
  return all;
}

}  // namespace ccm::app
