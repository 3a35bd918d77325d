#pragma once
// The SPBM (Storage Policy Based Management) wire format: method arguments as XML and answers
// parsed from XML, as vCenter's PBM service at /pbm/sdk speaks it (namespace "urn:pbm"; govmomi's
// pbm/types name the elements). Pure functions, table-tested on their own.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "pugixml.hpp"
#include "vsphere/moref.h"

namespace ccm::vsphere::pbm {

// PbmServiceInstanceContent: the managers the calls below go to.
struct ServiceContent {
  Moref profile_manager;
  Moref placement_solver;
};

// A storage profile (PbmCapabilityProfile) as PbmRetrieveContent describes it.
struct Profile {
  std::string id;        // profileId.uniqueId, what CNS takes as a profile id
  std::string name;      // what StorageClasses name (storagepolicyname)
  std::string category;  // REQUIREMENT, RESOURCE, DATA_SERVICE_POLICY
};

// One hub (datastore or datastore cluster) of a PbmCheckCompatibility answer.
struct HubCompatibility {
  Moref hub;               // {hubType, hubId}: {"Datastore", "datastore-12"}
  bool compatible = true;  // no error entry
  std::string reason;      // the first error's message when not compatible
};

inline const Moref& ServiceInstance() {
  static const Moref* const m = new Moref{"PbmServiceInstance", "ServiceInstance"};
  return *m;
}

std::string RetrieveServiceContentArgs();
// PbmQueryProfile of every STORAGE profile (any category).
std::string QueryProfileArgs(const Moref& profile_manager);
std::string RetrieveContentArgs(const Moref& profile_manager, const std::vector<std::string>& ids);
std::string CheckCompatibilityArgs(const Moref& placement_solver, const std::vector<Moref>& hubs,
                                   const std::string& profile_id);

// `body` is the method's response element (SoapResponse::body).
absl::StatusOr<ServiceContent> ParseServiceContent(const pugi::xml_node& body);
std::vector<std::string> ParseProfileIds(const pugi::xml_node& body);
std::vector<Profile> ParseProfiles(const pugi::xml_node& body);
std::vector<HubCompatibility> ParseCompatibility(const pugi::xml_node& body);

}  // namespace ccm::vsphere::pbm
