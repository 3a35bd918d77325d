// The reference's faulttype values (issue 42 item 9), from the failures they describe.
#include "csi/controller/fault_type.h"

#include <gtest/gtest.h>

#include "common/status_macros.h"
#include "vsphere/soap.h"

namespace ccm::csi {
namespace {

TEST(FaultTypeTest, Table) {
  struct Case {
    std::string name;
    absl::Status status;
    std::string want;
  } cases[] = {
      {"ok", absl::OkStatus(), ""},
      {"a CNS fault", vsphere::NamedFaultStatus("CnsFault", "disk busy"), "vim.fault.CnsFault"},
      {"a vim fault, annotated",
       Annotate(vsphere::NamedFaultStatus("NotFound", "gone"), "delete volume v1"),
       "vim.fault.NotFound"},
      {"a host not connected", vsphere::NamedFaultStatus("HostNotConnected", "h1"),
       "csi.fault.nonstorage.vim.fault.HostNotConnected"},
      {"a host in a bad state", vsphere::NamedFaultStatus("InvalidHostState", "h1"),
       "csi.fault.nonstorage.vim.fault.InvalidHostState"},
      {"a node VM vCenter does not know", VmNotFound(absl::NotFoundError("node x: no VM")),
       "csi.fault.nonstorage.VmNotFound"},
      {"a bad request", absl::InvalidArgumentError("name is required"),
       "csi.fault.InvalidArgument"},
      {"not found", absl::NotFoundError("volume v1"), "csi.fault.NotFound"},
      {"unimplemented", absl::UnimplementedError("clones"), "csi.fault.Unimplemented"},
      {"anything else", absl::FailedPreconditionError("attached elsewhere"), "csi.fault.Internal"},
      {"vCenter unreachable", absl::UnavailableError("connection refused"), "csi.fault.Internal"},
  };
  for (const Case& c : cases) EXPECT_EQ(FaultTypeOf(c.status), c.want) << c.name;
}

// The metadata's way to the interceptor and out of the answer: controller_conformance_test.
TEST(FaultTypeTest, AnswerKeepsTheCodeAndMessage) {
  grpc::ServerContext ctx;
  grpc::Status s = Answer(&ctx, vsphere::NamedFaultStatus("CnsFault", "busy"));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNKNOWN);
  EXPECT_EQ(s.error_message(), "CnsFault: busy");
  EXPECT_TRUE(Answer(&ctx, absl::OkStatus()).ok());
  EXPECT_TRUE(Answer(nullptr, absl::OkStatus()).ok());
}

}  // namespace
}  // namespace ccm::csi
