#include "app/ccm/diagnose.h"

#include <cstdio>

#include "app/ccm/manager.h"
#include "app/ccm/options.h"
#include "app/shared/diagnose_cli.h"
#include "diagnose/config_checks.h"

namespace ccm::app {

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
  } else {
    diagnose::CheckConfig(o->cloud_config, LoadConfig(*o, env), report);
  }
  return PrintReport(report, d->json);
}

}  // namespace ccm::app
