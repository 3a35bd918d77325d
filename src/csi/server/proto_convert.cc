#include "csi/server/proto_convert.h"

namespace ccm::csi {

VolumeCapability FromProto(const ::csi::v1::VolumeCapability& cap) {
  VolumeCapability out;
  if (cap.has_mount()) {
    out.access_type = AccessType::kMount;
    out.fs_type = cap.mount().fs_type();
    out.mount_flags.assign(cap.mount().mount_flags().begin(), cap.mount().mount_flags().end());
  } else if (cap.has_block()) {
    out.access_type = AccessType::kBlock;
  }
  out.has_access_mode = cap.has_access_mode();
  out.mode = static_cast<AccessMode>(cap.access_mode().mode());
  return out;
}

std::vector<VolumeCapability> FromProto(
    const google::protobuf::RepeatedPtrField<::csi::v1::VolumeCapability>& caps) {
  std::vector<VolumeCapability> out;
  out.reserve(caps.size());
  for (const auto& c : caps) out.push_back(FromProto(c));
  return out;
}

CapacityRange FromProto(const ::csi::v1::CapacityRange& range) {
  return {.required_bytes = range.required_bytes(), .limit_bytes = range.limit_bytes()};
}

Segments FromProto(const ::csi::v1::Topology& topology) {
  return Segments(topology.segments().begin(), topology.segments().end());
}

TopologyRequirement FromProto(const ::csi::v1::TopologyRequirement& req) {
  TopologyRequirement out;
  for (const auto& t : req.requisite()) out.requisite.push_back(FromProto(t));
  for (const auto& t : req.preferred()) out.preferred.push_back(FromProto(t));
  return out;
}

std::map<std::string, std::string> FromProto(
    const google::protobuf::Map<std::string, std::string>& map) {
  return std::map<std::string, std::string>(map.begin(), map.end());
}

void ToProto(const Segments& segments, ::csi::v1::Topology* out) {
  for (const auto& [k, v] : segments) (*out->mutable_segments())[k] = v;
}

void ToProto(const std::map<std::string, std::string>& map,
             google::protobuf::Map<std::string, std::string>* out) {
  for (const auto& [k, v] : map) (*out)[k] = v;
}

}  // namespace ccm::csi
