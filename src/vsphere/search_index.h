#pragma once
// SearchIndex look-ups, always per datacenter and for VMs only (vmSearch=true).

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "vsphere/client.h"
#include "vsphere/moref.h"

namespace ccm::vsphere {

// FindByUuid with the BIOS uuid (instanceUuid=false). nullopt: no such VM in `datacenter`.
absl::StatusOr<std::optional<Moref>> FindVmByUuid(Client& client, const Moref& datacenter,
                                                  absl::string_view bios_uuid);
// FindAllByDnsName (guest hostname as reported by VMware Tools).
absl::StatusOr<std::vector<Moref>> FindVmsByDnsName(Client& client, const Moref& datacenter,
                                                    absl::string_view dns_name);
// FindAllByIp (guest IP addresses).
absl::StatusOr<std::vector<Moref>> FindVmsByIp(Client& client, const Moref& datacenter,
                                               absl::string_view ip);

}  // namespace ccm::vsphere
