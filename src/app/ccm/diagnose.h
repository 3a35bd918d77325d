#pragma once
// `vsphere-cloud-controller-manager diagnose [--output json] --cloud-config=...`: the checks
// (diagnose/) on what the controller manager would read; read-only. Returns the exit code.

#include <map>
#include <string>
#include <vector>

namespace ccm::app {

int RunCcmDiagnose(const std::vector<std::string>& args,
                   const std::map<std::string, std::string>& env);

}  // namespace ccm::app
