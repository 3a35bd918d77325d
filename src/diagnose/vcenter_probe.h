#pragma once
// diagnose's vCenter checks, the I/O side: runs each step against one configured vCenter with the
// component's own client options (cloud::ClientOptionsFor) and credentials, collects the facts
// and hands them to the pure judges (vcenter_checks.h, privileges.h). Read-only: it logs in,
// reads, and logs out (the SOAP session and, for the zone check, the REST one).

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "cloud/config/config.h"
#include "diagnose/privileges.h"
#include "diagnose/report.h"
#include "diagnose/vcenter_checks.h"
#include "diagnose/zone_checks.h"
#include "vsphere/credential_source.h"

namespace ccm::diagnose {

struct VcenterCheckOptions {
  Component component = Component::kCpi;
  // BIOS UUIDs of the cluster's node VMs (from the Nodes' providerIDs); their privileges are
  // checked too. Empty: no node VM is checked.
  std::vector<std::string> node_vm_uuids;
  // The tag categories the component reads for zones (empty: no zone check).
  std::vector<std::string> tag_categories;
  // CSI: file volumes are configured or claimed (their privileges become required).
  bool file_volumes = false;
  absl::Duration timeout = absl::Seconds(10);
};

// Returns whether it logged in and found every configured datacenter (the component's own
// inventory would load: later checks can use the vCenter).
bool CheckVcenter(const cloud::VirtualCenterConfig& vc, vsphere::CredentialSource& creds,
                  const VcenterCheckOptions& options, Report& report);

}  // namespace ccm::diagnose
