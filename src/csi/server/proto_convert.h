#pragma once
// csi.v1 protobuf messages <-> the plain types of src/csi/core, so the decisions stay in the
// pure core and the service only converts.

#include <map>
#include <string>
#include <vector>

#include "csi/core/types.h"
#include "csi/proto/csi.pb.h"

namespace ccm::csi {

VolumeCapability FromProto(const ::csi::v1::VolumeCapability& cap);
std::vector<VolumeCapability> FromProto(
    const google::protobuf::RepeatedPtrField<::csi::v1::VolumeCapability>& caps);
CapacityRange FromProto(const ::csi::v1::CapacityRange& range);
TopologyRequirement FromProto(const ::csi::v1::TopologyRequirement& req);
Segments FromProto(const ::csi::v1::Topology& topology);
std::map<std::string, std::string> FromProto(
    const google::protobuf::Map<std::string, std::string>& map);

void ToProto(const Segments& segments, ::csi::v1::Topology* out);
void ToProto(const std::map<std::string, std::string>& map,
             google::protobuf::Map<std::string, std::string>* out);

}  // namespace ccm::csi
