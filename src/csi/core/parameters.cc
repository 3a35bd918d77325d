#include "csi/core/parameters.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "csi/core/constants.h"

namespace ccm::csi {
namespace {

constexpr absl::string_view kReservedPrefix = "csi.storage.k8s.io/";

// In-tree vSphere volume plugin settings the reference names when refusing them
// (HostFailuresToTolerateMigrationParam, ForceProvisioningMigrationParam, ...).
bool IsInTreeVsanParam(absl::string_view key) {
  return key == "hostfailurestotolerate-migrationparam" ||
         key == "forceprovisioning-migrationparam" || key == "cachereservation-migrationparam" ||
         key == "diskstripes-migrationparam" || key == "objectspacereservation-migrationparam" ||
         key == "iopslimit-migrationparam";
}

}  // namespace

absl::StatusOr<VolumeParameters> ParseParameters(const std::map<std::string, std::string>& params) {
  // Lower-case every key first, so duplicates are found before any is interpreted.
  std::map<std::string, std::pair<std::string, std::string>> by_key;  // lower -> (original, value)
  for (const auto& [key, value] : params) {
    std::string lower = absl::AsciiStrToLower(key);
    auto [it, inserted] = by_key.try_emplace(lower, key, value);
    if (!inserted) {
      return absl::InvalidArgumentError(absl::StrCat(
          "parameter \"", key, "\" is given twice (also as \"", it->second.first, "\")"));
    }
  }

  VolumeParameters out;
  if (auto it = by_key.find(std::string(kParamCsiMigration)); it != by_key.end()) {
    out.csi_migration = absl::EqualsIgnoreCase(it->second.second, "true");
  }
  for (const auto& [key, original_value] : by_key) {
    const std::string& original = original_value.first;
    const std::string& value = original_value.second;
    if (key == kParamDatastoreUrl) {
      out.datastore_url = value;
    } else if (key == kParamStoragePolicyName) {
      out.storage_policy_name = value;
    } else if (key == kParamFsTypeDeprecated) {
      out.warnings.push_back(absl::StrCat(
          "parameter \"", original, "\" is deprecated and ignored; use \"", kParamFsType, "\""));
    } else if (key == kParamCsiMigration) {
      // Read above.
    } else if (key == kParamPvName) {
      out.pv_name = value;
    } else if (key == kParamPvcName) {
      out.pvc_name = value;
    } else if (key == kParamPvcNamespace) {
      out.pvc_namespace = value;
    } else if (absl::StartsWith(key, kReservedPrefix)) {
      // The sidecars' namespace: not a StorageClass setting of ours.
    } else if (out.csi_migration && key == kParamDatastoreMigration) {
      out.migration_datastore = value;
    } else if (out.csi_migration && key == kParamDiskFormatMigration) {
      if (!absl::EqualsIgnoreCase(value, "thin")) {
        return absl::InvalidArgumentError(absl::StrCat("parameter \"", original,
                                                       "\": disk format \"", value,
                                                       "\" is not supported (only thin)"));
      }
    } else if (out.csi_migration && IsInTreeVsanParam(key)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "parameter \"", original,
          "\" of the in-tree vSphere volume plugin is not supported; use a storage policy"));
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unknown parameter \"", original,
                                                     "\" (supported: ", kParamDatastoreUrl, ", ",
                                                     kParamStoragePolicyName, ")"));
    }
  }
  return out;
}

}  // namespace ccm::csi
