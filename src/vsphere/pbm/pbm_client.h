#pragma once
// PbmClient: the SPBM calls the CSI controller needs (storage policies and the datastores that
// satisfy them), on the vim25 session of a vsphere::Client (its kPbmEndpoint, /pbm/sdk: the same
// cookie, retries, re-login and metrics as every other vCenter call). Every call is a query.
//
// Errors: the Client's (Unavailable when vCenter could not be asked, Unauthenticated, ...); a PBM
// fault keeps its type name and message (soap.h mapping, e.g. InvalidArgument for an unknown
// profile id). Thread-safe.

#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "vsphere/client.h"
#include "vsphere/pbm/wire.h"

namespace ccm::vsphere::pbm {

class PbmClient {
 public:
  // `vim` must outlive the PbmClient.
  explicit PbmClient(Client& vim) : vim_(vim) {}

  // Every storage profile: PbmQueryProfile (STORAGE) then PbmRetrieveContent of their ids; two
  // requests (three the first time: the service content is fetched once and cached).
  absl::StatusOr<std::vector<Profile>> ListProfiles();

  // PbmCheckCompatibility of `profile_id` against `hubs` (datastores, datastore clusters): one
  // entry per hub PBM answered for, compatible or with the reason it is not.
  absl::StatusOr<std::vector<HubCompatibility>> CheckCompatibility(const std::string& profile_id,
                                                                   const std::vector<Moref>& hubs);

 private:
  absl::StatusOr<ServiceContent> Content();

  Client& vim_;
  absl::Mutex mu_;
  bool have_content_ ABSL_GUARDED_BY(mu_) = false;
  ServiceContent content_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ccm::vsphere::pbm
