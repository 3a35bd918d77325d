#include "app/csi/diagnose.h"

#include <cstdio>

#include "absl/strings/match.h"
#include "app/csi/config.h"
#include "app/csi/diagnose_volumes.h"
#include "app/shared/diagnose_cli.h"
#include "app/shared/diagnose_cluster.h"
#include "cloud/credentials/credential_store.h"
#include "csi/controller/controller_backend.h"
#include "csi/controller/host_topology.h"
#include "diagnose/config_checks.h"

namespace ccm::app {
namespace {

struct CsiDiagnoseFlags {
  std::string kubeconfig, master;
};

// --kubeconfig / --master (as the syncer takes them); KUBECONFIG otherwise (as the node plugin).
std::optional<CsiDiagnoseFlags> ParseFlags(const std::vector<std::string>& rest,
                                           const std::map<std::string, std::string>& env) {
  CsiDiagnoseFlags f;
  if (auto it = env.find("KUBECONFIG"); it != env.end()) f.kubeconfig = it->second;
  for (size_t i = 1; i < rest.size(); ++i) {
    if (absl::StartsWith(rest[i], "--kubeconfig=")) {
      f.kubeconfig = rest[i].substr(13);
    } else if (absl::StartsWith(rest[i], "--master=")) {
      f.master = rest[i].substr(9);
    } else {
      fprintf(stderr,
              "diagnose: unknown argument \"%s\" (the driver reads VSPHERE_CSI_CONFIG; "
              "--kubeconfig=, --master= are accepted)\n",
              rest[i].c_str());
      return std::nullopt;
    }
  }
  return f;
}

void DiagnoseCluster(const CsiDiagnoseFlags& flags, const cloud::Config& config,
                     diagnose::Report& report) {
  std::shared_ptr<kube::RestClient> api =
      DiagnoseKubeClient(flags.master, flags.kubeconfig, report);
  std::optional<std::vector<kube::Json>> nodes;
  if (api) nodes = DiagnoseListNodes(*api, report);
  cloud::CredentialStore creds(config, nullptr);  // the driver's credentials are in its config
  (void)creds.Start();
  diagnose::VcenterCheckOptions vo;
  vo.component = diagnose::Component::kCsi;
  if (nodes) vo.node_vm_uuids = NodeVmUuids(*nodes);
  vo.tag_categories = csi::CategoriesOf(csi::TopologyOf(config)).categories;
  const bool vcenters_ok = DiagnoseVcenters(config, creds, vo, report);
  creds.Stop();
  if (!nodes) return;
  std::vector<diagnose::NodeFacts> facts;
  for (const kube::Json& n : *nodes) facts.push_back(NodeFactsOf(n));
  diagnose::NodeCheckContext c;
  c.component = diagnose::Component::kCsi;
  c.zones_configured = config.labels.ZonesEnabled();
  c.zone_category = config.labels.zone;
  c.region_category = config.labels.region;
  diagnose::JudgeNodes(facts, c, report);
  if (vcenters_ok) {
    DiagnoseVolumes(config, api, *nodes, report);
  } else {
    report.Warn("volumes", "volume checks skipped: a vCenter check failed",
                "fix the vCenter errors above");
  }
}

}  // namespace

int RunCsiDiagnose(const std::vector<std::string>& args,
                   const std::map<std::string, std::string>& env) {
  std::optional<DiagnoseArgs> d = DiagnoseArgsOrComplain(args);
  if (!d) return 2;
  std::optional<CsiDiagnoseFlags> flags = ParseFlags(d->rest, env);
  if (!flags) return 2;
  std::string path = "/etc/cloud/csi-vsphere.conf";
  if (auto it = env.find("VSPHERE_CSI_CONFIG"); it != env.end() && !it->second.empty()) {
    path = it->second;
  }
  diagnose::Report report;
  absl::StatusOr<cloud::ParseResult> parsed = ReadCsiConfig(path, env);
  diagnose::CheckConfig(path, parsed, report);
  if (parsed.ok()) DiagnoseCluster(*flags, parsed->config, report);
  return PrintReport(report, d->json);
}

}  // namespace ccm::app
