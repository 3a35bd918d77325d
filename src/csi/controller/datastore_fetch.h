#pragma once
// One round trip for every datastore and every ESXi host of the watched datacenters: a
// RetrievePropertiesEx over each Datacenter's `datastore` list (members of datastore clusters
// included: vCenter lists a StoragePod's datastores in their datacenter's `datastore` too) and its
// host folder down to the hosts of every (cluster) compute resource, with the properties
// placement needs. No view to create and destroy, so a refresh costs one request, not three per
// datacenter.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "csi/core/placement.h"
#include "vsphere/client.h"
#include "vsphere/datacenter.h"
#include "vsphere/moref.h"
#include "vsphere/property_collector.h"

namespace ccm::csi {

struct DatastoreRecord {
  vsphere::Moref moref;
  std::string datacenter;  // the datacenter's name
  std::string name;
  std::string url;   // summary.url
  std::string type;  // summary.type (VMFS, NFS, vsan, ...)
  int64_t free_bytes = 0;
  bool usable = true;      // summary.accessible and not in maintenance mode
  vsphere::Moref parent;   // a StoragePod when the datastore belongs to a datastore cluster
  bool suspended = false;  // a custom value kDatastoreSuspended (CNS manager's suspension)
  std::vector<vsphere::Moref> hosts;  // hosts that mount it, mounted and accessible
};

struct HostRecordRaw {
  vsphere::Moref moref;
  std::string name;
};

struct DatastoreFetch {
  std::vector<DatastoreRecord> datastores;
  std::vector<HostRecordRaw> hosts;  // every host of the datacenters, mounting anything or not
};

// The datacenters `specs` names (vsphere.conf `datacenters`: names, paths or MOIDs), all when
// empty. NotFound / InvalidArgument from SelectDatacenter name the entry.
absl::StatusOr<std::vector<vsphere::Datacenter>> WatchedDatacenters(
    vsphere::Client& client, const std::vector<std::string>& specs);

absl::StatusOr<DatastoreFetch> FetchDatastores(vsphere::Client& client,
                                               const std::vector<vsphere::Datacenter>& datacenters);

// Pure: the records in a RetrievePropertiesEx answer for the spec FetchDatastores sends.
// A datastore or host listed twice (cannot happen in vCenter) is kept once.
DatastoreFetch ParseDatastores(const std::vector<vsphere::ObjectContent>& objects,
                               const std::vector<vsphere::Datacenter>& datacenters);

}  // namespace ccm::csi
