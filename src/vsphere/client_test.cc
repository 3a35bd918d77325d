// Client session logic against a tiny in-process fake vim25 endpoint (fake_vc_testing.h).
#include "vsphere/client.h"

#include <atomic>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "testing/fake_vcenter.h"

namespace ccm::vsphere {
namespace {

ClientOptions Opts(const FakeVc& vc) { return FakeVcOptions(vc); }

TEST(ClientTest, LogsInLazilyAndReusesSession) {
  FakeVc vc;
  MutableCreds creds;
  creds.Set("user", "pass");
  std::vector<std::string> observed;
  ClientOptions o = Opts(vc);
  o.observer = [&](absl::string_view m, absl::StatusCode c, absl::Duration) {
    observed.push_back(absl::StrCat(m, "=", absl::StatusCodeToString(c)));
  };
  {
    Client c(o, &creds);
    EXPECT_EQ(c.session_status().state, SessionState::kLoggedOut);
    auto r = c.Call("Ping", MorefXml("_this", {"X", "x"}));
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(std::string(r->returnval().child_value()), "pong");
    ASSERT_TRUE(c.Call("Ping", "").ok());
    EXPECT_EQ(vc.logins, 1);
    EXPECT_EQ(vc.service_content, 1);
    EXPECT_EQ(c.session_generation(), 1u);
    EXPECT_EQ(c.session_status().state, SessionState::kLoggedIn);
  }
  EXPECT_EQ(vc.logouts, 1);  // destructor logs out
  EXPECT_EQ(observed.front(), "RetrieveServiceContent=OK");
  EXPECT_EQ(observed.back(), "Logout=OK");
}

TEST(ClientTest, NoCredentialsNoLogin) {
  FakeVc vc;
  MutableCreds creds;  // nothing yet
  Client c(Opts(vc), &creds);
  auto r = c.Call("Ping", "");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  creds.Set("user", "");
  r = c.Call("Ping", "");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(r.status().message(), "empty")) << r.status();
  EXPECT_EQ(vc.logins, 0);
  EXPECT_EQ(c.session_status().state, SessionState::kLoginFailed);
}

TEST(ClientTest, BadPasswordIsUnauthenticatedWithoutSecretInMessage) {
  FakeVc vc;
  MutableCreds creds;
  creds.Set("user", "wrong-secret");
  Client c(Opts(vc), &creds);
  auto r = c.Call("Ping", "");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(FaultName(r.status()), "InvalidLogin");
  EXPECT_FALSE(absl::StrContains(r.status().message(), "wrong-secret"));
  EXPECT_EQ(c.session_generation(), 0u);
}

TEST(ClientTest, ReloginOnceAfterNotAuthenticated) {
  FakeVc vc;
  MutableCreds creds;
  creds.Set("user", "pass");
  Client c(Opts(vc), &creds);
  ASSERT_TRUE(c.Call("Ping", "").ok());
  ++vc.session;  // server forgets the session
  ASSERT_TRUE(c.Call("Ping", "").ok());
  EXPECT_EQ(vc.logins, 2);
  EXPECT_EQ(c.session_generation(), 2u);

  vc.always_not_authenticated = true;
  auto r = c.Call("Ping", "");
  EXPECT_TRUE(IsNotAuthenticated(r.status())) << r.status();
  EXPECT_EQ(vc.logins, 3);  // exactly one re-login, then the error
}

TEST(ClientTest, NotAuthenticatedInAMissingSetLogsInAgain) {
  FakeVc vc;
  MutableCreds creds;
  creds.Set("user", "pass");
  Client c(Opts(vc), &creds);
  const std::string args = MorefXml("_this", {"PropertyCollector", "propertyCollector"});
  ASSERT_TRUE(c.Call("RetrievePropertiesEx", args).ok());
  ++vc.session;  // a restarted vCenter: the old session is unknown, answers come as missingSet
  auto r = c.Call("RetrievePropertiesEx", args);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(vc.logins, 2);
  EXPECT_EQ(c.session_generation(), 2u);
  EXPECT_NE(r->doc->first_child().find_node(
                [](const pugi::xml_node& n) { return absl::string_view(n.name()) == "propSet"; }),
            pugi::xml_node());

  vc.always_not_authenticated = true;  // never readable: an error, not an empty answer
  r = c.Call("RetrievePropertiesEx", args);
  EXPECT_TRUE(IsNotAuthenticated(r.status())) << r.status();
  EXPECT_TRUE(absl::StrContains(r.status().message(), "missingSet")) << r.status();
  EXPECT_EQ(vc.logins, 3);
}

TEST(ClientTest, InvalidateSessionLogsInOnTheNextCallOnlyForThatSession) {
  FakeVc vc;
  MutableCreds creds;
  creds.Set("user", "pass");
  Client c(Opts(vc), &creds);
  ASSERT_TRUE(c.Call("Ping", "").ok());
  c.InvalidateSession(0);  // an older session: nothing to do
  ASSERT_TRUE(c.Call("Ping", "").ok());
  EXPECT_EQ(vc.logins, 1);
  c.InvalidateSession(1);
  EXPECT_EQ(c.session_status().state, SessionState::kLoggedOut);
  ASSERT_TRUE(c.Call("Ping", "").ok());
  EXPECT_EQ(vc.logins, 2);
  EXPECT_EQ(c.session_generation(), 2u);
}

TEST(ClientTest, ProbeNeedsNoSessionAndNoticesAnotherInstance) {
  FakeVc vc;
  MutableCreds creds;
  creds.Set("user", "pass");
  Client c(Opts(vc), &creds);
  ASSERT_TRUE(c.Probe(absl::Seconds(2)).ok());
  EXPECT_EQ(vc.logins, 0);
  ASSERT_TRUE(c.Call("Ping", "").ok());
  ASSERT_TRUE(c.Probe(absl::Seconds(2)).ok());
  EXPECT_EQ(c.session_status().state, SessionState::kLoggedIn);  // same instance: kept
  vc.instance = 2;  // a redeployed or restored vCenter behind the same address
  ASSERT_TRUE(c.Probe(absl::Seconds(2)).ok());
  EXPECT_EQ(c.session_status().state, SessionState::kLoggedOut);
  ASSERT_TRUE(c.Call("Ping", "").ok());
  EXPECT_EQ(vc.logins, 2);
  auto sc = c.GetServiceContent();
  ASSERT_TRUE(sc.ok());
  EXPECT_EQ(sc->instance_uuid, "i2");
}

TEST(ClientTest, ProbeOfAnUnreachableVcenterFailsFast) {
  ClientOptions o;
  o.url = "http://127.0.0.1:1/sdk";  // nothing listens on port 1
  MutableCreds creds;
  creds.Set("user", "pass");
  Client c(o, &creds);
  absl::Status s = c.Probe(absl::Seconds(2));
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "probe http://127.0.0.1:1/sdk")) << s;
}

TEST(ClientTest, CredentialRotationLogsInAgain) {
  FakeVc vc;
  MutableCreds creds;
  creds.Set("user", "pass");
  Client c(Opts(vc), &creds);
  ASSERT_TRUE(c.Call("Ping", "").ok());
  vc.expected_password = "pass2";
  creds.Set("user", "pass2");
  ASSERT_TRUE(c.Call("Ping", "").ok());
  EXPECT_EQ(vc.logins, 2);
  EXPECT_EQ(vc.logouts, 1);  // the old session was ended
  EXPECT_EQ(c.session_generation(), 2u);
}

TEST(ClientTest, Retries503UpToRoundtripCount) {
  FakeVc vc;
  MutableCreds creds;
  creds.Set("user", "pass");
  Client c(Opts(vc), &creds);
  ASSERT_TRUE(c.Login().ok());
  vc.fail_503 = 2;
  ASSERT_TRUE(c.Call("Ping", "").ok());
  vc.fail_503 = 3;
  auto r = c.Call("Ping", "");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(absl::StrContains(r.status().message(), "HTTP 503 from " + vc.url())) << r.status();
  EXPECT_EQ(vc.fail_503, 0);
}

TEST(ClientTest, ConnectionRefusedIsUnavailable) {
  MutableCreds creds;
  creds.Set("user", "pass");
  ClientOptions o;
  o.url = "http://127.0.0.1:1/sdk";
  o.retry_backoff.initial = absl::Milliseconds(1);
  Client c(o, &creds);
  EXPECT_EQ(c.Login().code(), absl::StatusCode::kUnavailable);
}

TEST(HostOfUrlTest, Table) {
  EXPECT_EQ(HostOfUrl("https://vc.example.com:443/sdk"), "vc.example.com");
  EXPECT_EQ(HostOfUrl("https://vc/sdk"), "vc");
  EXPECT_EQ(HostOfUrl("https://[fd00::1]:443/sdk"), "fd00::1");
  EXPECT_EQ(HostOfUrl("10.0.0.1"), "10.0.0.1");
}

}  // namespace
}  // namespace ccm::vsphere
