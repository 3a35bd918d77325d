#include "cloud/core/matching.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

namespace ccm::cloud {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const char* kBios = "422e4956-ad22-1139-6d72-59cc8f26bc90";    // VMware order
const char* kSmbios = "56492e42-22ad-3911-6d72-59cc8f26bc90";  // what kubelet reports

VmRef Vm(std::string moid, std::string vc = "vc1", std::string uuid = kBios) {
  return VmRef{vc, "dc1", moid, uuid, "vm-" + moid};
}

// Fake inventory: answers per key; a key in `down` fails with the given status.
struct FakeInventory {
  std::map<std::string, std::vector<VmRef>> uuid, host, ip;
  std::map<std::string, absl::Status> down;
  std::vector<std::string> calls;

  VmLookup Make(const char* kind, std::map<std::string, std::vector<VmRef>>* table) {
    return [this, kind, table](absl::string_view key) -> absl::StatusOr<std::vector<VmRef>> {
      calls.push_back(std::string(kind) + ":" + std::string(key));
      if (auto it = down.find(std::string(key)); it != down.end()) return it->second;
      auto it = table->find(std::string(key));
      return it == table->end() ? std::vector<VmRef>{} : it->second;
    };
  }
  VmLookups Lookups() { return {Make("uuid", &uuid), Make("host", &host), Make("ip", &ip)}; }
};

struct MatchCase {
  std::string name;
  NodeIdentity node;
  std::function<void(FakeInventory&)> setup;
  std::string want_moid;  // empty = error
  MatchMethod want_method = MatchMethod::kProviderId;
  absl::StatusCode want_code = absl::StatusCode::kOk;
  std::vector<std::string> want_msg = {};
  std::vector<std::string> want_calls = {};  // empty = do not check
};

class MatchNodeToVmTest : public ::testing::TestWithParam<MatchCase> {};

TEST_P(MatchNodeToVmTest, Table) {
  const MatchCase& c = GetParam();
  FakeInventory inv;
  if (c.setup) c.setup(inv);
  auto got = MatchNodeToVm(c.node, inv.Lookups());
  if (!c.want_calls.empty()) {
    EXPECT_EQ(inv.calls, c.want_calls);
  }
  if (c.want_moid.empty()) {
    ASSERT_FALSE(got.ok()) << "matched " << DebugString(got->vm);
    EXPECT_EQ(got.status().code(), c.want_code) << got.status();
    for (const std::string& m : c.want_msg)
      EXPECT_THAT(std::string(got.status().message()), HasSubstr(m));
    return;
  }
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->vm.moid, c.want_moid);
  EXPECT_EQ(got->method, c.want_method);
}

INSTANTIATE_TEST_SUITE_P(Table, MatchNodeToVmTest,
                         ::testing::Values(
                             MatchCase{"ByProviderId",
                                       {"n1", std::string("vsphere://") + kBios, kSmbios, ""},
                                       [](FakeInventory& i) { i.uuid[kBios] = {Vm("vm-1")}; },
                                       "vm-1",
                                       MatchMethod::kProviderId,
                                       absl::StatusCode::kOk,
                                       {},
                                       {std::string("uuid:") + kBios}},
                             MatchCase{"ByProviderIdUpperCase",
                                       {"n1", "vsphere://422E4956-AD22-1139-6D72-59CC8F26BC90"},
                                       [](FakeInventory& i) { i.uuid[kBios] = {Vm("vm-1")}; },
                                       "vm-1"},
                             MatchCase{"BySmbiosSystemUuidConverted",
                                       {"n1", "", kSmbios},
                                       [](FakeInventory& i) { i.uuid[kBios] = {Vm("vm-2")}; },
                                       "vm-2",
                                       MatchMethod::kSystemUuid,
                                       absl::StatusCode::kOk,
                                       {},
                                       {std::string("uuid:") + kBios}},
                             MatchCase{
                                 "BySystemUuidAsReported",
                                 {"n1", "", kBios},
                                 [](FakeInventory& i) { i.uuid[kBios] = {Vm("vm-3")}; },
                                 "vm-3",
                                 MatchMethod::kSystemUuid,
                                 absl::StatusCode::kOk,
                                 {},
                                 {std::string("uuid:") + kSmbios, std::string("uuid:") + kBios}},
                             MatchCase{"SystemUuidUpperCaseFromKubelet",
                                       {"n1", "", "56492E42-22AD-3911-6D72-59CC8F26BC90"},
                                       [](FakeInventory& i) { i.uuid[kBios] = {Vm("vm-2")}; },
                                       "vm-2",
                                       MatchMethod::kSystemUuid},
                             // A providerID is the only key: its VM gone = NotFound,
                             // whatever else matches now.
                             MatchCase{
                                 "ProviderIdGoneNeverFallsBackToSystemUuid",
                                 {"n1", "vsphere://00000000-0000-0000-0000-000000000001", kSmbios},
                                 [](FakeInventory& i) { i.uuid[kBios] = {Vm("vm-2")}; },
                                 "",
                                 MatchMethod::kProviderId,
                                 absl::StatusCode::kNotFound,
                                 {"uuid 00000000-0000-0000-0000-000000000001 "
                                  "(providerID)"},
                                 {"uuid:00000000-0000-0000-0000-000000000001"}},
                             MatchCase{
                                 "ProviderIdGoneNeverFallsBackToHostname",
                                 {"node-1", "vsphere://00000000-0000-0000-0000-000000000001", ""},
                                 [](FakeInventory& i) { i.host["node-1"] = {Vm("vm-other")}; },
                                 "",
                                 MatchMethod::kProviderId,
                                 absl::StatusCode::kNotFound,
                                 {"no VM found for node node-1"},
                                 {"uuid:00000000-0000-0000-0000-000000000001"}},
                             MatchCase{
                                 "ProviderIdGoneNeverFallsBackToReusedIp",
                                 {"10.0.0.7", "vsphere://00000000-0000-0000-0000-000000000001", ""},
                                 [](FakeInventory& i) {
                                   i.host["10.0.0.7"] = {Vm("vm-new")};
                                   i.ip["10.0.0.7"] = {Vm("vm-new")};
                                 },
                                 "",
                                 MatchMethod::kProviderId,
                                 absl::StatusCode::kNotFound,
                                 {},
                                 {"uuid:00000000-0000-0000-0000-000000000001"}},
                             MatchCase{
                                 "ByHostname",
                                 {"node-1.lab", "", ""},
                                 [](FakeInventory& i) { i.host["node-1.lab"] = {Vm("vm-4")}; },
                                 "vm-4",
                                 MatchMethod::kHostname},
                             MatchCase{"ByHostnameAfterUuidsMiss",
                                       {"node-1", "", kSmbios},
                                       [](FakeInventory& i) { i.host["node-1"] = {Vm("vm-4")}; },
                                       "vm-4",
                                       MatchMethod::kHostname,
                                       absl::StatusCode::kOk,
                                       {},
                                       {std::string("uuid:") + kBios,
                                        std::string("uuid:") + kSmbios, "host:node-1"}},
                             MatchCase{"ByNameAsIp",
                                       {"10.0.0.7", "", ""},
                                       [](FakeInventory& i) { i.ip["10.0.0.7"] = {Vm("vm-5")}; },
                                       "vm-5",
                                       MatchMethod::kIp,
                                       absl::StatusCode::kOk,
                                       {},
                                       {"host:10.0.0.7", "ip:10.0.0.7"}},
                             MatchCase{"ByNameAsIpv6Canonical",
                                       {"FD00:0:0::7", "", ""},
                                       [](FakeInventory& i) { i.ip["fd00::7"] = {Vm("vm-6")}; },
                                       "vm-6",
                                       MatchMethod::kIp},
                             MatchCase{"FirstMatchDecides",
                                       {"node-1", "", kSmbios},
                                       [](FakeInventory& i) {
                                         i.uuid[kBios] = {Vm("vm-uuid")};
                                         i.host["node-1"] = {Vm("vm-host")};
                                       },
                                       "vm-uuid",
                                       MatchMethod::kSystemUuid},
                             MatchCase{"SameVmTwiceIsOneMatch",
                                       {"node-1"},
                                       [](FakeInventory& i) {
                                         i.host["node-1"] = {Vm("vm-1"), Vm("vm-1")};
                                       },
                                       "vm-1",
                                       MatchMethod::kHostname},
                             MatchCase{"SameMoidInTwoVcentersIsTwoVms",
                                       {"node-1"},
                                       [](FakeInventory& i) {
                                         i.host["node-1"] = {Vm("vm-1", "vc1"), Vm("vm-1", "vc2")};
                                       },
                                       "",
                                       MatchMethod::kHostname,
                                       absl::StatusCode::kFailedPrecondition,
                                       {"2 VMs match hostname node-1", "vm-1 (vm-vm-1) in vc1/dc1",
                                        "vm-1 (vm-vm-1) in vc2/dc1"}},
                             MatchCase{"TwoVmsWithTheHostnameIsAnErrorNamingThem",
                                       {"node-1"},
                                       [](FakeInventory& i) {
                                         i.host["node-1"] = {Vm("vm-1"), Vm("vm-9")};
                                       },
                                       "",
                                       MatchMethod::kHostname,
                                       absl::StatusCode::kFailedPrecondition,
                                       {"vm-1 (vm-vm-1) in vc1/dc1", "vm-9 (vm-vm-9) in vc1/dc1",
                                        "refusing to guess"}},
                             MatchCase{"TwoVmsWithTheUuid",
                                       {"n1", "", kBios},
                                       [](FakeInventory& i) {
                                         i.uuid[kBios] = {Vm("vm-1", "vc1"), Vm("vm-2", "vc2")};
                                       },
                                       "",
                                       MatchMethod::kSystemUuid,
                                       absl::StatusCode::kFailedPrecondition,
                                       {"2 VMs match uuid"}},
                             MatchCase{"NotFoundListsEverythingTried",
                                       {"node-1", "", kSmbios},
                                       nullptr,
                                       "",
                                       MatchMethod::kProviderId,
                                       absl::StatusCode::kNotFound,
                                       {"no VM found for node node-1",
                                        std::string("uuid ") + kBios + " (systemUUID)",
                                        std::string("uuid ") + kSmbios + " (systemUUID)",
                                        "hostname node-1"},
                                       {std::string("uuid:") + kBios,
                                        std::string("uuid:") + kSmbios, "host:node-1"}},
                             MatchCase{"NotFoundMentionsBadSystemUuid",
                                       {"node-1", "", "garbage"},
                                       nullptr,
                                       "",
                                       MatchMethod::kProviderId,
                                       absl::StatusCode::kNotFound,
                                       {"hostname node-1", "systemUUID \"garbage\" (not a UUID)"}},
                             MatchCase{
                                 "NothingToTry",
                                 {},
                                 nullptr,
                                 "",
                                 MatchMethod::kProviderId,
                                 absl::StatusCode::kNotFound,
                                 {"tried nothing"}},
                             MatchCase{"ForeignProviderIdIsNeverNotFound",
                                       {"node-1", "aws:///us-east-1a/i-1", kSmbios},
                                       nullptr,
                                       "",
                                       MatchMethod::kProviderId,
                                       absl::StatusCode::kInvalidArgument,
                                       {"node node-1", "not a vSphere provider ID"}},
                             // A look-up that could not ask every vCenter:
                             // Unavailable, never NotFound.
                             MatchCase{
                                 "UnavailableIsReturnedAtOnce",
                                 {"node-1", "", kSmbios},
                                 [](FakeInventory& i) {
                                   i.down[kBios] =
                                       absl::UnavailableError("vc2: connection refused");
                                   i.host["node-1"] = {Vm("vm-4")};
                                 },
                                 "",
                                 MatchMethod::kProviderId,
                                 absl::StatusCode::kUnavailable,
                                 {"find VM of node node-1 by uuid", "vc2: connection refused"},
                                 {std::string("uuid:") + kBios}},
                             MatchCase{"LookupNotFoundBecomesUnavailable",
                                       {"node-1"},
                                       [](FakeInventory& i) {
                                         i.down["node-1"] =
                                             absl::NotFoundError("datacenter dc9 not found");
                                       },
                                       "",
                                       MatchMethod::kProviderId,
                                       absl::StatusCode::kUnavailable,
                                       {"datacenter dc9 not found"}},
                             MatchCase{"OtherErrorsKeepTheirCode",
                                       {"node-1"},
                                       [](FakeInventory& i) {
                                         i.down["node-1"] =
                                             absl::PermissionDeniedError("login failed");
                                       },
                                       "",
                                       MatchMethod::kProviderId,
                                       absl::StatusCode::kPermissionDenied,
                                       {"login failed"}}),
                         [](const ::testing::TestParamInfo<MatchCase>& info) {
                           return info.param.name;
                         });

TEST(MatchNodeToVmTest, MissingLookupIsInternal) {
  VmLookups l;
  auto got = MatchNodeToVm({"node-1"}, l);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInternal);
}

TEST(MatchNodeToVmTest, Names) {
  EXPECT_EQ(MatchMethodName(MatchMethod::kSystemUuid), "systemUUID");
  EXPECT_EQ(DebugString(Vm("vm-1")), "vm-1 (vm-vm-1) in vc1/dc1");
}

}  // namespace
}  // namespace ccm::cloud
