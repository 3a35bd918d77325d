// Client::CallStreaming against the fake vim25 endpoint: the body reaches the sink piece by
// piece, and errors, retries and re-login follow Call's rules.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/fake_vcenter.h"
#include "vsphere/client.h"
#include "vsphere/update_stream.h"

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

// Where an answer can be cut so that no object was handed on yet / some already were.
const size_t kBeforeFirstObject = kAnswer.find("</objectSet>");
const size_t kAfterFirstObject = kBeforeFirstObject + 20;

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

class Names : public UpdateHandler {
 public:
  absl::Status OnObject(const std::string& filter, ObjectUpdate u) override {
    vms.push_back(u.obj.value);
    return absl::OkStatus();
  }
  std::vector<std::string> vms;
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

TEST_F(ClientStreamingTest, ParsesWaitForUpdatesEx) {
  vc_.QueueWaitAnswer({.body = kAnswer, .chunk = 5});
  Names names;
  UpdateStreamParser parser(names);
  ASSERT_TRUE(Wait(parser).ok());
  EXPECT_THAT(names.vms, testing::ElementsAre("vm-1", "vm-2", "vm-3"));
  EXPECT_EQ(parser.version(), "5");
}

TEST_F(ClientStreamingTest, LogsInAgainOnceAfterNotAuthenticated) {
  vc_.QueueWaitAnswer({.body = kAnswer});
  ASSERT_TRUE(client_->Login().ok());
  ++vc_.session;  // the server forgot the session: a 500 NotAuthenticated fault
  Names names;
  UpdateStreamParser parser(names);
  ASSERT_TRUE(Wait(parser).ok());
  EXPECT_EQ(vc_.logins, 2);
  EXPECT_EQ(vc_.waits, 2);
  EXPECT_THAT(names.vms, testing::ElementsAre("vm-1", "vm-2", "vm-3"));

  vc_.always_not_authenticated = true;
  absl::Status s = Wait(parser);
  EXPECT_TRUE(IsNotAuthenticated(s)) << s;
  EXPECT_EQ(vc_.logins, 3);  // exactly one re-login, then the error
}

TEST_F(ClientStreamingTest, NotAuthenticatedFaultInA200BodyAlsoLogsInAgain) {
  vc_.QueueWaitAnswer({.body = FaultXml("NotAuthenticated")});
  vc_.QueueWaitAnswer({.body = kAnswer});
  Names names;
  UpdateStreamParser parser(names);
  ASSERT_TRUE(Wait(parser).ok());
  EXPECT_EQ(vc_.logins, 2);
  EXPECT_THAT(names.vms, testing::ElementsAre("vm-1", "vm-2", "vm-3"));
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

TEST_F(ClientStreamingTest, DroppedBeforeAnyObjectIsRetried) {
  vc_.QueueWaitAnswer({.body = kAnswer, .drop_after = kBeforeFirstObject});
  vc_.QueueWaitAnswer({.body = kAnswer});
  Names names;
  UpdateStreamParser parser(names);
  ASSERT_TRUE(Wait(parser).ok());
  EXPECT_EQ(vc_.waits, 2);
  EXPECT_THAT(names.vms, testing::ElementsAre("vm-1", "vm-2", "vm-3"));  // each once
}

TEST_F(ClientStreamingTest, DroppedAfterAnObjectWasHandedOnIsNotRetried) {
  vc_.QueueWaitAnswer({.body = kAnswer, .drop_after = kAfterFirstObject});
  vc_.QueueWaitAnswer({.body = kAnswer});
  Names names;
  UpdateStreamParser parser(names);
  absl::Status s = Wait(parser);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_THAT(std::string(s.message()), testing::StartsWith("WaitForUpdatesEx: "));
  EXPECT_EQ(vc_.waits, 1);
  EXPECT_THAT(names.vms, testing::ElementsAre("vm-1")) << s;
}

struct ErrorCase {
  const char* name;
  FakeVc::Answer answer;
  absl::StatusCode code;
  const char* message_part;
  int waits;  // requests the Client sends
};

TEST_F(ClientStreamingTest, ErrorsAreTheSameAsCall) {
  const std::string half = kAnswer.substr(0, kAfterFirstObject);
  const ErrorCase cases[] = {
      {"fault",
       {.status = 500, .body = FaultXml("NotSupported")},
       absl::StatusCode::kUnimplemented,
       "NotSupported: NotSupported happened",
       1},
      {"not found fault",
       {.status = 500, .body = FaultXml("ManagedObjectNotFound")},
       absl::StatusCode::kNotFound,
       "ManagedObjectNotFound",
       1},
      {"HTTP 404",
       {.status = 404, .body = "no such page"},
       absl::StatusCode::kUnavailable,
       "HTTP 404 from",
       1},
      {"HTTP 503 every time",
       {.status = 503, .body = "busy"},
       absl::StatusCode::kUnavailable,
       "HTTP 503 from",
       3},
      {"malformed",
       {.body = "<soapenv:Envelope><<"},
       absl::StatusCode::kDataLoss,
       "malformed WaitForUpdatesEx response: XML error at line 1, column",
       1},
      {"truncated document",
       {.body = half},
       absl::StatusCode::kDataLoss,
       "malformed WaitForUpdatesEx response: XML error at line 1",
       1},
      {"not the answer",
       {.body = Env("<PingResponse xmlns=\"urn:vim25\"/>")},
       absl::StatusCode::kDataLoss,
       "no WaitForUpdatesExResponse element",
       1},
  };
  for (const ErrorCase& c : cases) {
    FakeVc vc;
    MutableCreds creds;
    creds.Set("user", "pass");
    Client client(FakeVcOptions(vc), &creds);
    vc.QueueWaitAnswer(c.answer);
    Names names;
    UpdateStreamParser parser(names);
    absl::Status s = client.CallStreaming("WaitForUpdatesEx", "", parser);
    EXPECT_EQ(s.code(), c.code) << c.name << ": " << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr(c.message_part)) << c.name;
    EXPECT_EQ(vc.waits, c.waits) << c.name;
    EXPECT_EQ(vc.logins, 1) << c.name;
  }
}

}  // namespace
}  // namespace ccm::vsphere
