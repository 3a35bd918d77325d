#include "vsphere/pbm/pbm_client.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "vsphere/soap.h"

namespace ccm::vsphere::pbm {

absl::StatusOr<ServiceContent> PbmClient::Content() {
  {
    absl::MutexLock l(&mu_);
    if (have_content_) return content_;
  }
  absl::StatusOr<SoapResponse> r =
      vim_.Call(kPbmEndpoint, "PbmRetrieveServiceContent", RetrieveServiceContentArgs());
  if (!r.ok()) return Annotate(r.status(), "SPBM service content");
  CCM_ASSIGN_OR_RETURN(ServiceContent sc, ParseServiceContent(r->body));
  absl::MutexLock l(&mu_);
  have_content_ = true;
  content_ = sc;
  return sc;
}

absl::StatusOr<std::vector<Profile>> PbmClient::ListProfiles() {
  CCM_ASSIGN_OR_RETURN(ServiceContent sc, Content());
  absl::StatusOr<SoapResponse> ids =
      vim_.Call(kPbmEndpoint, "PbmQueryProfile", QueryProfileArgs(sc.profile_manager));
  if (!ids.ok()) return Annotate(ids.status(), "list storage policies");
  std::vector<std::string> wanted = ParseProfileIds(ids->body);
  if (wanted.empty()) return std::vector<Profile>();
  absl::StatusOr<SoapResponse> content = vim_.Call(kPbmEndpoint, "PbmRetrieveContent",
                                                   RetrieveContentArgs(sc.profile_manager, wanted));
  if (!content.ok()) return Annotate(content.status(), "read storage policies");
  return ParseProfiles(content->body);
}

absl::StatusOr<std::vector<HubCompatibility>> PbmClient::CheckCompatibility(
    const std::string& profile_id, const std::vector<Moref>& hubs) {
  if (hubs.empty()) return std::vector<HubCompatibility>();
  CCM_ASSIGN_OR_RETURN(ServiceContent sc, Content());
  absl::StatusOr<SoapResponse> r =
      vim_.Call(kPbmEndpoint, "PbmCheckCompatibility",
                CheckCompatibilityArgs(sc.placement_solver, hubs, profile_id));
  if (!r.ok()) {
    return Annotate(r.status(),
                    absl::StrCat("datastores compatible with storage policy ", profile_id));
  }
  return ParseCompatibility(r->body);
}

}  // namespace ccm::vsphere::pbm
