#include "app/csi/diagnose.h"

#include <cstdio>

#include "app/csi/config.h"
#include "app/shared/diagnose_cli.h"
#include "diagnose/config_checks.h"

namespace ccm::app {

int RunCsiDiagnose(const std::vector<std::string>& args,
                   const std::map<std::string, std::string>& env) {
  std::optional<DiagnoseArgs> d = DiagnoseArgsOrComplain(args);
  if (!d) return 2;
  if (d->rest.size() > 1) {
    fprintf(stderr, "diagnose: unknown argument \"%s\" (the driver reads VSPHERE_CSI_CONFIG)\n",
            d->rest[1].c_str());
    return 2;
  }
  std::string path = "/etc/cloud/csi-vsphere.conf";
  if (auto it = env.find("VSPHERE_CSI_CONFIG"); it != env.end() && !it->second.empty()) {
    path = it->second;
  }
  diagnose::Report report;
  diagnose::CheckConfig(path, ReadCsiConfig(path, env), report);
  return PrintReport(report, d->json);
}

}  // namespace ccm::app
