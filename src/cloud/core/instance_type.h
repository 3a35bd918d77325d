#pragma once
// The node.kubernetes.io/instance-type value the Go provider writes:
//   vsphere-vm.cpu-<numCpu>.mem-<floor(memoryMB/1024)>gb.os-<short guest OS name>

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace ccm::cloud {

// Short name for a vSphere guest id (summary.config.guestId): the reference's GuestOSLookup table,
// extended with the same naming pattern for guest ids newer than that table (rhel8/9,
// centos8/9, debian11/12, sles15, other4x/5xLinux, recent Windows). "unknown" when not listed.
absl::string_view GuestOsShortName(absl::string_view guest_id);

// Negative inputs (never reported by vCenter) are clamped to 0.
std::string FormatInstanceType(int32_t num_cpu, int64_t memory_mb, absl::string_view guest_id);

}  // namespace ccm::cloud
