#include "csi/migration/intree.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "csi/core/constants.h"

namespace ccm::csi {
namespace {

constexpr char kProvisionedBy[] = "pv.kubernetes.io/provisioned-by";
constexpr char kMigratedTo[] = "pv.kubernetes.io/migrated-to";
constexpr char kInTreePlugin[] = "kubernetes.io/vsphere-volume";

std::string Annotation(const nlohmann::json& pv, const char* key, bool* present = nullptr) {
  auto md = pv.find("metadata");
  if (md == pv.end() || !md->is_object()) return "";
  auto ann = md->find("annotations");
  if (ann == md->end() || !ann->is_object()) return "";
  auto v = ann->find(key);
  if (v == ann->end() || !v->is_string()) return "";
  if (present != nullptr) *present = true;
  return v->get<std::string>();
}

std::string VsphereVolumeField(const nlohmann::json& pv, const char* field) {
  const nlohmann::json::json_pointer p(std::string("/spec/vsphereVolume/") + field);
  if (!pv.contains(p) || !pv.at(p).is_string()) return "";
  return pv.at(p).get<std::string>();
}

}  // namespace

absl::StatusOr<VmdkPath> ParseVmdkPath(absl::string_view volume_path) {
  absl::string_view s = absl::StripAsciiWhitespace(volume_path);
  const size_t close = s.find(']');
  if (!absl::ConsumePrefix(&s, "[") || close == absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("in-tree volume path \"", volume_path, "\" does not start with [datastore]"));
  }
  absl::string_view ds = s.substr(0, close - 1);
  absl::string_view file = absl::StripAsciiWhitespace(s.substr(close));
  if (const size_t slash = ds.rfind('/'); slash != absl::string_view::npos) {
    ds = ds.substr(slash + 1);
  }
  if (ds.empty() || file.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("in-tree volume path \"", volume_path, "\" needs a datastore and a file"));
  }
  return VmdkPath{std::string(ds), std::string(file)};
}

std::string PathEscape(absl::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (absl::ascii_isalnum(c) ||
        absl::string_view("-_.~$&+,:;=@").find(c) != absl::string_view::npos) {
      out.push_back(static_cast<char>(c));
    } else {
      absl::StrAppend(&out, absl::StrFormat("%%%02X", c));
    }
  }
  return out;
}

std::string BackingDiskUrlPath(absl::string_view vcenter_host, const VmdkPath& disk,
                               absl::string_view datacenter) {
  return absl::StrCat("https://", vcenter_host, "/folder/", disk.file,
                      "?dcPath=", PathEscape(datacenter), "&dsName=", PathEscape(disk.datastore));
}

bool IsMigratedInTreePv(const nlohmann::json& pv) {
  if (InTreeVolumePath(pv).empty()) return false;
  bool provisioned = false;
  const std::string by = Annotation(pv, kProvisionedBy, &provisioned);
  if (!provisioned) return true;  // a static in-tree PV
  return by == kInTreePlugin && Annotation(pv, kMigratedTo) == kDriverName;
}

std::string InTreeVolumePath(const nlohmann::json& pv) {
  return VsphereVolumeField(pv, "volumePath");
}

std::vector<std::string> PodInTreeVolumePaths(const nlohmann::json& pod) {
  std::vector<std::string> out;
  const nlohmann::json::json_pointer volumes("/spec/volumes");
  if (!pod.contains(volumes) || !pod.at(volumes).is_array()) return out;
  const nlohmann::json::json_pointer path("/vsphereVolume/volumePath");
  for (const nlohmann::json& v : pod.at(volumes)) {
    if (v.is_object() && v.contains(path) && v.at(path).is_string()) {
      out.push_back(v.at(path).get<std::string>());
    }
  }
  return out;
}

std::string InTreeStoragePolicyName(const nlohmann::json& pv) {
  return VsphereVolumeField(pv, "storagePolicyName");
}

}  // namespace ccm::csi
