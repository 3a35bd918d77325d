#include "cloud/core/instance_type.h"

#include <gtest/gtest.h>

namespace ccm::cloud {
namespace {

TEST(InstanceTypeTest, Format) {
  struct Case {
    int32_t cpu;
    int64_t mb;
    const char* guest;
    const char* want;
  } cases[] = {
      {2, 4096, "ubuntu64Guest", "vsphere-vm.cpu-2.mem-4gb.os-ubuntu"},
      {4, 8192, "rhel9_64Guest", "vsphere-vm.cpu-4.mem-8gb.os-rhel9"},
      {1, 2048, "vmwarePhoton64Guest", "vsphere-vm.cpu-1.mem-2gb.os-photon"},
      {8, 16384, "centos7_64Guest", "vsphere-vm.cpu-8.mem-16gb.os-centos7"},
      {2, 2048, "otherLinux64Guest", "vsphere-vm.cpu-2.mem-2gb.os-linux"},
      {4, 8192, "windows9Server64Guest", "vsphere-vm.cpu-4.mem-8gb.os-win10server"},
      {2, 4096, "windows9_64Guest", "vsphere-vm.cpu-2.mem-4gb.os-win10"},
      {2, 4096, "otherGuest64", "vsphere-vm.cpu-2.mem-4gb.os-other"},
      {2, 4096, "debian10_64Guest", "vsphere-vm.cpu-2.mem-4gb.os-debian10"},
      {2, 4096, "sles12_64Guest", "vsphere-vm.cpu-2.mem-4gb.os-sles12"},
      {2, 4096, "eComStation2Guest", "vsphere-vm.cpu-2.mem-4gb.os-eComStation2"},
      // floor(memoryMB / 1024), like Go's integer division.
      {1, 1023, "ubuntu64Guest", "vsphere-vm.cpu-1.mem-0gb.os-ubuntu"},
      {1, 1024, "ubuntu64Guest", "vsphere-vm.cpu-1.mem-1gb.os-ubuntu"},
      {1, 3583, "ubuntu64Guest", "vsphere-vm.cpu-1.mem-3gb.os-ubuntu"},
      {128, 4194304, "ubuntu64Guest", "vsphere-vm.cpu-128.mem-4096gb.os-ubuntu"},
      // Not in the table: "unknown", also for case variants and empty ids.
      {2, 4096, "", "vsphere-vm.cpu-2.mem-4gb.os-unknown"},
      {2, 4096, "Ubuntu64Guest", "vsphere-vm.cpu-2.mem-4gb.os-unknown"},
      {2, 4096, "someFutureGuest", "vsphere-vm.cpu-2.mem-4gb.os-unknown"},
      {0, 0, "ubuntu64Guest", "vsphere-vm.cpu-0.mem-0gb.os-ubuntu"},
      {-1, -2048, "ubuntu64Guest", "vsphere-vm.cpu-0.mem-0gb.os-ubuntu"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(FormatInstanceType(c.cpu, c.mb, c.guest), c.want) << c.guest;
  }
}

TEST(InstanceTypeTest, ShortNames) {
  struct Case {
    const char* guest;
    const char* want;
  } cases[] = {
      {"rhel8_64Guest", "rhel8"},        {"rhel7Guest", "rhel7"},
      {"redhatGuest", "rhel"},           {"centos64Guest", "centos64"},
      {"darwin16_64Guest", "darwin"},    {"genericLinuxGuest", "linux"},
      {"other3xLinux64Guest", "linux"},  {"other5xLinux64Guest", "linux"},
      {"winXPPro64Guest", "winxppro"},   {"oracleLinux7_64Guest", "oracleLinux7"},
      {"vmkernel65Guest", "vmkernel65"}, {"debian12_64Guest", "debian12"},
      {"turboLinuxGuest", "turbolinux"}, {"nope", "unknown"},
  };
  for (const Case& c : cases) EXPECT_EQ(GuestOsShortName(c.guest), c.want) << c.guest;
}

}  // namespace
}  // namespace ccm::cloud
