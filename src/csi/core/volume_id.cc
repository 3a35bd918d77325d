#include "csi/core/volume_id.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "csi/core/constants.h"
#include "csi/core/uuid.h"

namespace ccm::csi {

absl::StatusOr<std::string> FormatVolumeId(absl::string_view cns_id, absl::string_view vcenter,
                                           size_t vcenter_count) {
  if (cns_id.empty()) return absl::InvalidArgumentError("cannot format a volume ID: empty CNS ID");
  // Bare with any number of vCenters, as the reference (CnsVolumeInfo records the vCenter).
  (void)vcenter;
  (void)vcenter_count;
  if (cns_id.size() > kMaxVolumeIdBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "CNS volume ID \"", cns_id, "\" exceeds the CSI limit of ", kMaxVolumeIdBytes, " bytes"));
  }
  return std::string(cns_id);
}

bool IsInTreeVolumePath(absl::string_view volume_id) {
  return absl::StrContains(volume_id, ".vmdk");  // as the reference tells them
}

absl::StatusOr<VolumeRef> ParseVolumeId(absl::string_view volume_id) {
  if (volume_id.empty()) return absl::InvalidArgumentError("volume ID is empty");
  if (volume_id.size() > kMaxVolumeIdBytes && !IsInTreeVolumePath(volume_id)) {
    return absl::InvalidArgumentError(
        absl::StrCat("volume ID exceeds the CSI limit of ", kMaxVolumeIdBytes, " bytes"));
  }
  size_t at = volume_id.find('@');
  if (at != absl::string_view::npos && at + 1 < volume_id.size() &&
      IsUuid(volume_id.substr(0, at))) {
    return VolumeRef{std::string(volume_id.substr(0, at)), std::string(volume_id.substr(at + 1))};
  }
  return VolumeRef{std::string(volume_id), ""};
}

absl::StatusOr<std::vector<std::string>> VCentersToAsk(const VolumeRef& ref,
                                                       const std::vector<std::string>& configured) {
  if (configured.empty()) return absl::FailedPreconditionError("no vCenter is configured");
  if (ref.vcenter.empty()) return configured;
  for (const std::string& host : configured) {
    if (absl::EqualsIgnoreCase(host, ref.vcenter)) return std::vector<std::string>{host};
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "volume ", ref.cns_id, " lives in vCenter \"", ref.vcenter,
      "\", which is not in the configuration (configured: ", absl::StrJoin(configured, ", "), ")"));
}

absl::StatusOr<std::string> DecideVolumeVCenter(absl::string_view volume_id,
                                                const std::vector<VCenterAnswer>& answers) {
  std::vector<std::string> found;
  std::vector<std::string> failed;
  for (const VCenterAnswer& a : answers) {
    if (!a.status.ok()) {
      failed.push_back(absl::StrCat(a.vcenter, ": ", a.status.message()));
    } else if (a.found) {
      found.push_back(a.vcenter);
    }
  }
  if (found.size() == 1) return found.front();
  if (found.size() > 1) {
    return absl::FailedPreconditionError(
        absl::StrCat("volume ", volume_id, " exists in several vCenters (",
                     absl::StrJoin(found, ", "), "); refusing to guess"));
  }
  if (!failed.empty()) {
    return absl::UnavailableError(absl::StrCat("cannot tell where volume ", volume_id,
                                               " lives: ", absl::StrJoin(failed, "; ")));
  }
  return absl::NotFoundError(absl::StrCat("volume ", volume_id, " not found"));
}

bool IsFileVolumeId(absl::string_view cns_id) { return absl::StartsWith(cns_id, "file:"); }

std::string TransactionVolumeId(absl::string_view volume_name) {
  const size_t at = volume_name.find("pvc-");
  if (at == absl::string_view::npos) return "";
  const absl::string_view uid = volume_name.substr(at + 4);
  // 8-4-4-4-12 hexadecimal digits, and nothing after them.
  if (uid.size() != 36) return "";
  for (size_t i = 0; i < uid.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? uid[i] != '-' : !absl::ascii_isxdigit(static_cast<unsigned char>(uid[i]))) {
      return "";
    }
  }
  return absl::AsciiStrToLower(uid);
}

}  // namespace ccm::csi
