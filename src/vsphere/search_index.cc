#include "vsphere/search_index.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace ccm::vsphere {
namespace {

absl::StatusOr<std::string> Prefix(Client& client, const Moref& datacenter) {
  CCM_ASSIGN_OR_RETURN(ServiceContent sc, client.GetServiceContent());
  if (sc.search_index.empty()) return absl::UnimplementedError("vCenter has no SearchIndex");
  return absl::StrCat(MorefXml("_this", sc.search_index), MorefXml("datacenter", datacenter));
}

absl::StatusOr<std::vector<Moref>> FindAll(Client& client, absl::string_view method,
                                           const Moref& datacenter, absl::string_view arg,
                                           absl::string_view value) {
  auto context = [&] { return absl::StrCat(method, " ", value, " in ", datacenter.value); };
  absl::StatusOr<std::string> prefix = Prefix(client, datacenter);
  if (!prefix.ok()) return Annotate(prefix.status(), context());
  absl::StatusOr<SoapResponse> r =
      client.Call(method, absl::StrCat(*prefix, TextXml(arg, value), TextXml("vmSearch", "true")));
  if (!r.ok()) return Annotate(r.status(), context());
  std::vector<Moref> out;
  for (const pugi::xml_node& n : Children(r->body, "returnval")) out.push_back(ParseMoref(n));
  return out;
}

}  // namespace

absl::StatusOr<std::optional<Moref>> FindVmByUuid(Client& client, const Moref& datacenter,
                                                  absl::string_view bios_uuid) {
  auto context = [&] {
    return absl::StrCat("find VM by uuid ", bios_uuid, " in ", datacenter.value);
  };
  absl::StatusOr<std::string> prefix = Prefix(client, datacenter);
  if (!prefix.ok()) return Annotate(prefix.status(), context());
  absl::StatusOr<SoapResponse> r = client.Call(
      "FindByUuid", absl::StrCat(*prefix, TextXml("uuid", bios_uuid), TextXml("vmSearch", "true"),
                                 TextXml("instanceUuid", "false")));
  if (!r.ok()) return Annotate(r.status(), context());
  Moref m = ParseMoref(r->returnval());
  if (m.empty()) return std::optional<Moref>();
  return std::optional<Moref>(m);
}

absl::StatusOr<std::vector<Moref>> FindVmsByDnsName(Client& client, const Moref& datacenter,
                                                    absl::string_view dns_name) {
  return FindAll(client, "FindAllByDnsName", datacenter, "dnsName", dns_name);
}

absl::StatusOr<std::vector<Moref>> FindVmsByIp(Client& client, const Moref& datacenter,
                                               absl::string_view ip) {
  return FindAll(client, "FindAllByIp", datacenter, "ip", ip);
}

}  // namespace ccm::vsphere
