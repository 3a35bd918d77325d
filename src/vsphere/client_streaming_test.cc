// Client::CallStreaming against the fake vim25 endpoint: the body reaches the sink piece by
// piece, and errors, retries and re-login follow Call's rules.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vsphere/client.h"
#include "vsphere/fake_vc_testing.h"

namespace ccm::vsphere {
namespace {

using ::testing::HasSubstr;

std::string ObjectSet(const std::string& vm) {
  return absl::StrCat("<objectSet><kind>enter</kind><obj type=\"VirtualMachine\">", vm,
                      "</obj><changeSet><name>name</name><op>assign</op><val>", vm,
                      "</val></changeSet></objectSet>");
}

const std::string kAnswer =
    Env(absl::StrCat("<WaitForUpdatesExResponse xmlns=\"urn:vim25\"><returnval><version>5</version>"
                     "<filterSet><filter type=\"PropertyFilter\">f1</filter>",
                     ObjectSet("vm-1"), ObjectSet("vm-2"), ObjectSet("vm-3"),
                     "</filterSet></returnval></WaitForUpdatesExResponse>"));

// Counts what the Client does with a sink.
class RecordingSink : public SoapStreamSink {
 public:
  void Reset() override {
    ++resets;
    body.clear();
  }
  absl::Status Feed(absl::string_view bytes) override {
    ++feeds;
    body.append(bytes.data(), bytes.size());
    return absl::OkStatus();
  }
  absl::Status Finish() override {
    ++finishes;
    return absl::OkStatus();
  }
  bool emitted() const override { return false; }
  int resets = 0, feeds = 0, finishes = 0;
  std::string body;
};

class ClientStreamingTest : public testing::Test {
 protected:
  ClientStreamingTest() {
    creds_.Set("user", "pass");
    ClientOptions o = FakeVcOptions(vc_);
    o.observer = [this](absl::string_view m, absl::StatusCode c, absl::Duration) {
      if (m == "WaitForUpdatesEx") round_trips_.push_back(absl::StatusCodeToString(c));
    };
    client_ = std::make_unique<Client>(o, &creds_);
  }
  absl::Status Wait(SoapStreamSink& sink) {
    return client_->CallStreaming("WaitForUpdatesEx",
                                  MorefXml("_this", {"PropertyCollector", "pc"}), sink);
  }

  FakeVc vc_;
  MutableCreds creds_;
  std::vector<std::string> round_trips_;
  std::unique_ptr<Client> client_;
};

TEST_F(ClientStreamingTest, BodyReachesTheSinkPieceByPiece) {
  std::string objects;
  for (int i = 0; i < 400; ++i) objects += ObjectSet(absl::StrCat("vm-", i));
  const std::string big = Env(
      absl::StrCat("<WaitForUpdatesExResponse xmlns=\"urn:vim25\"><returnval><version>5</version>"
                   "<filterSet><filter>f1</filter>",
                   objects, "</filterSet></returnval></WaitForUpdatesExResponse>"));
  vc_.QueueWaitAnswer({.body = big, .chunk = 4096});
  RecordingSink sink;
  ASSERT_TRUE(Wait(sink).ok());
  EXPECT_EQ(sink.body, big);
  EXPECT_GT(sink.feeds, 1);      // curl hands on at most 16 kB at a time
  EXPECT_EQ(vc_.gzip_waits, 1);  // asked for gzip; curl inflated on the way
  EXPECT_EQ(sink.resets, 1);
  EXPECT_EQ(sink.finishes, 1);
  EXPECT_EQ(vc_.logins, 1);
}

TEST_F(ClientStreamingTest, TransientErrorsAreRetriedWithTheSinkReset) {
  ASSERT_TRUE(client_->Login().ok());
  vc_.fail_503 = 2;
  vc_.QueueWaitAnswer({.body = kAnswer});
  RecordingSink sink;
  ASSERT_TRUE(Wait(sink).ok());
  EXPECT_EQ(sink.resets, 3);
  EXPECT_EQ(sink.body, kAnswer);
  EXPECT_THAT(round_trips_, testing::ElementsAre("UNAVAILABLE", "UNAVAILABLE", "OK"));
}

}  // namespace
}  // namespace ccm::vsphere
