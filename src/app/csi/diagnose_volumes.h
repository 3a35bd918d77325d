#pragma once
// The CSI driver's diagnose, volume part (I/O): loads the Controller service's own backend
// (read-only: no operation-record clean-up, nothing created), then asks its CreateVolume
// decisions (ControllerService::PlanCreate) about each StorageClass of the driver and each
// Pending claim, as the external-provisioner would send them; reads the VolumeAttachments, and
// which hosts have no topology segment. The lines come from diagnose/volume_checks.h.

#include <memory>
#include <string>
#include <vector>

#include "cloud/config/config.h"
#include "diagnose/report.h"
#include "kube/client.h"

namespace ccm::app {

// The message of the newest ProvisioningFailed Event about the claim named `claim` ("" when
// none), from the Events of its namespace.
std::string NewestProvisioningFailure(const std::vector<kube::Json>& events,
                                      const std::string& claim);

void DiagnoseVolumes(const cloud::Config& config, std::shared_ptr<kube::Client> api,
                     const std::vector<kube::Json>& nodes, diagnose::Report& report);

}  // namespace ccm::app
