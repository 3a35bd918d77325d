#pragma once
// `vsphere-csi-driver diagnose [--output json]`: the checks (diagnose/) on what the driver would
// read: csi-vsphere.conf at VSPHERE_CSI_CONFIG (default /etc/cloud/csi-vsphere.conf), as the
// controller and the syncer read it; read-only. Returns the exit code.

#include <map>
#include <string>
#include <vector>

namespace ccm::app {

int RunCsiDiagnose(const std::vector<std::string>& args,
                   const std::map<std::string, std::string>& env);

}  // namespace ccm::app
