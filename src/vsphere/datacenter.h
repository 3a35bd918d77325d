#pragma once
// Datacenters: list all, and resolve the forms vsphere.conf's `datacenters` accepts: a name
// ("dc1"), an inventory path ("/folder/dc1"), or a MOID ("Datacenter:datacenter-3" or
// "datacenter-3").

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "vsphere/client.h"
#include "vsphere/moref.h"

namespace ccm::vsphere {

struct Datacenter {
  Moref moref;
  std::string name;
  std::string path;  // inventory path, e.g. "/dc1" or "/folder/dc1"
  Moref vm_folder;
  Moref host_folder;
};

// Every datacenter, with inventory paths, in one RetrievePropertiesEx (folder traversal).
absl::StatusOr<std::vector<Datacenter>> ListDatacenters(Client& client);

// Pure: picks the datacenter `spec` names from `all`. NotFound when none matches, InvalidArgument
// when a bare name is ambiguous (same name in two folders: use the path).
absl::StatusOr<Datacenter> SelectDatacenter(const std::vector<Datacenter>& all,
                                            absl::string_view spec);

// ListDatacenters + SelectDatacenter.
absl::StatusOr<Datacenter> FindDatacenter(Client& client, absl::string_view spec);

// The datacenters to look in: `configured` when set (as written), else every datacenter's path.
absl::StatusOr<std::vector<std::string>> DatacenterPaths(
    Client& client, const std::vector<std::string>& configured);

}  // namespace ccm::vsphere
