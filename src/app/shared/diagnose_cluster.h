#pragma once
// What both binaries' `diagnose` share beyond the config: the Kubernetes client (the component's
// own flags, or none), the Nodes, the credentials (the component's CredentialStore, Secrets read
// through the same watcher) and the vCenter checks for each configured vCenter.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cloud/config/config.h"
#include "cloud/credentials/credential_store.h"
#include "diagnose/node_checks.h"
#include "diagnose/report.h"
#include "diagnose/vcenter_checks.h"
#include "diagnose/vcenter_probe.h"
#include "kube/client.h"
#include "kube/resource.h"

namespace ccm::app {

// The client for master/kubeconfig (in-cluster when both are empty). nullptr with a warning
// line when there is no API configuration: the Kubernetes checks are then skipped.
std::unique_ptr<kube::RestClient> DiagnoseKubeClient(const std::string& master,
                                                     const std::string& kubeconfig,
                                                     diagnose::Report& report);

// Every object of a resource in all namespaces (all pages).
absl::StatusOr<std::vector<kube::Json>> ListAll(kube::Client& client, const kube::Resource& r);

// Every Node (all pages); an error line and nullopt when they cannot be listed.
std::optional<std::vector<kube::Json>> DiagnoseListNodes(kube::Client& client,
                                                         diagnose::Report& report);

// What diagnose/node_checks.h needs from a Node object (not the VM match).
diagnose::NodeFacts NodeFactsOf(const kube::Json& node);

// The BIOS UUIDs of the Nodes' providerIDs.
std::vector<std::string> NodeVmUuids(const std::vector<kube::Json>& nodes);

// The vCenter, privilege and zone checks of every configured vCenter, with the component's
// credentials (its started cloud::CredentialStore). `options` names the component, the node VMs
// and the tag categories it reads. Returns whether every vCenter answered.
bool DiagnoseVcenters(const cloud::Config& config, vsphere::CredentialSource& creds,
                      const diagnose::VcenterCheckOptions& options, diagnose::Report& report);

}  // namespace ccm::app
