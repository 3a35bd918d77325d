#include "app/ccm/diagnose.h"

#include <cstdio>
#include <memory>
#include <set>

#include "app/ccm/manager.h"
#include "app/ccm/options.h"
#include "app/ccm/secret_watcher.h"
#include "app/shared/diagnose_cli.h"
#include "app/shared/diagnose_cluster.h"
#include "cloud/credentials/credential_store.h"
#include "cloud/vsphere/vcenter.h"
#include "cloud/vsphere/vsphere_instances.h"
#include "controllers/node_update.h"
#include "diagnose/config_checks.h"

namespace ccm::app {
namespace {

// What the CPI's own matching says about each Node (the production VSphereInstances on fresh
// inventory caches).
std::vector<diagnose::NodeFacts> MatchNodes(const cloud::Config& config,
                                            vsphere::CredentialSource& creds,
                                            const std::vector<kube::Json>& nodes) {
  std::vector<std::unique_ptr<cloud::VCenter>> vcs;
  std::vector<cloud::VCenter*> ptrs;
  for (const cloud::VirtualCenterConfig& vc : config.vcenters) {
    vcs.push_back(std::make_unique<cloud::VCenter>(vc, &creds));
    ptrs.push_back(vcs.back().get());
    vcs.back()->Start();
  }
  for (cloud::VCenter* vc : ptrs) vc->inventory().WaitForSync(absl::Seconds(30));
  cloud::VSphereInstances instances(config, ptrs);
  std::vector<diagnose::NodeFacts> out;
  for (const kube::Json& n : nodes) {
    diagnose::NodeFacts f = NodeFactsOf(n);
    cloud::NodeIdentity id = controllers::NodeIdentityOf(n);
    if (id.provider_id.empty()) {
      absl::StatusOr<cloud::VmMatch> m = instances.Match(id);
      f.match = m.status();
      if (m.ok()) {
        f.vm = cloud::DebugString(m->vm);
        absl::StatusOr<bool> off = instances.InstanceShutdown(id);
        f.powered_off = off.ok() && *off;
        f.metadata = instances.GetInstanceMetadata(id).status();
      }
    } else {
      absl::StatusOr<bool> exists = instances.InstanceExists(id);
      f.match = !exists.ok() ? exists.status()
                : *exists    ? absl::OkStatus()
                             : absl::NotFoundError("no VM has its providerID's UUID");
      if (f.match->ok()) f.metadata = instances.GetInstanceMetadata(id).status();
    }
    out.push_back(std::move(f));
  }
  return out;
}

std::set<std::string> SecretNamespaces(const cloud::Config& config) {
  std::set<std::string> out;
  for (const cloud::VirtualCenterConfig& vc : config.vcenters) {
    if (vc.credential_source == cloud::CredentialSourceKind::kGlobalSecret ||
        vc.credential_source == cloud::CredentialSourceKind::kVCenterSecret) {
      out.insert(vc.secret_namespace);
    }
  }
  return out;
}

// Everything after the config: the cluster, the vCenters, the Nodes.
void DiagnoseCluster(const Options& o, const cloud::Config& config, diagnose::Report& report) {
  std::unique_ptr<kube::RestClient> api = DiagnoseKubeClient(o.master, o.kubeconfig, report);
  std::optional<std::vector<kube::Json>> nodes;
  if (api) nodes = DiagnoseListNodes(*api, report);
  const std::set<std::string> namespaces = SecretNamespaces(config);
  std::optional<KubeSecretWatcher> secrets;
  if (api && !namespaces.empty()) {
    secrets.emplace(*api, namespaces);
    secrets->Start();
    secrets->WaitForSync(absl::Seconds(10));
  }
  cloud::CredentialStore creds(config, secrets ? &*secrets : nullptr);
  (void)creds.Start();  // a source that cannot be read shows in its vCenter's lines
  diagnose::VcenterCheckOptions vo;
  vo.component = diagnose::Component::kCpi;
  if (nodes) vo.node_vm_uuids = NodeVmUuids(*nodes);
  if (config.labels.ZonesEnabled()) vo.tag_categories = {config.labels.zone, config.labels.region};
  const bool vcenters_ok = DiagnoseVcenters(config, creds, vo, report);
  if (nodes) {
    diagnose::NodeCheckContext c;
    c.zones_configured = config.labels.ZonesEnabled();
    c.zone_category = config.labels.zone;
    c.region_category = config.labels.region;
    // The CPI's matching needs every vCenter: without one, each Node says so.
    std::vector<diagnose::NodeFacts> facts;
    if (vcenters_ok) {
      facts = MatchNodes(config, creds, *nodes);
    } else {
      for (const kube::Json& n : *nodes) facts.push_back(NodeFactsOf(n));
    }
    diagnose::JudgeNodes(facts, c, report);
  }
  creds.Stop();
}

}  // namespace

int RunCcmDiagnose(const std::vector<std::string>& args,
                   const std::map<std::string, std::string>& env) {
  std::optional<DiagnoseArgs> d = DiagnoseArgsOrComplain(args);
  if (!d) return 2;
  absl::StatusOr<Options> o = ParseOptions(d->rest);
  if (!o.ok()) {
    fprintf(stderr, "diagnose: %s\n", std::string(o.status().message()).c_str());
    return 2;
  }
  diagnose::Report report;
  if (o->cloud_config.empty()) {
    report.Error("config", "no --cloud-config given",
                 "pass --cloud-config=<vsphere.conf>, as the "
                 "controller manager runs with");
    return PrintReport(report, d->json);
  }
  absl::StatusOr<cloud::ParseResult> parsed = LoadConfig(*o, env);
  diagnose::CheckConfig(o->cloud_config, parsed, report);
  if (parsed.ok()) DiagnoseCluster(*o, parsed->config, report);
  return PrintReport(report, d->json);
}

}  // namespace ccm::app
