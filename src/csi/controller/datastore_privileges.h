#pragma once
// The reference's csi-auth-check for block volumes: the datastores where the driver's vCenter
// user holds Datastore.FileManagement and System.Read, in ONE
// AuthorizationManager.FetchUserPrivilegeOnEntities call for every datastore of a vCenter.
// Placement leaves out the others (DatastoreCandidate::no_privilege) and names them.

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "vsphere/client.h"
#include "vsphere/moref.h"

namespace ccm::csi {

inline constexpr const char* kBlockVolumePrivileges[] = {"Datastore.FileManagement", "System.Read"};

// Pure: per entity of the answer, the privileges of kBlockVolumePrivileges it lacks (an entity
// the answer does not list lacks them all).
std::map<vsphere::Moref, std::vector<std::string>> MissingBlockVolumePrivileges(
    const vsphere::SoapResponse& answer, const std::vector<vsphere::Moref>& entities);

// Why `user` may not create volumes there, for each datastore that lacks a privilege ("" when
// it may): "user U lacks Datastore.FileManagement".
absl::StatusOr<std::map<vsphere::Moref, std::string>> CheckDatastorePrivileges(
    vsphere::Client& client, const std::string& user,
    const std::vector<vsphere::Moref>& datastores);

}  // namespace ccm::csi
