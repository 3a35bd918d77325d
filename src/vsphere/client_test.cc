// Client session logic against a tiny in-process fake vim25 endpoint (plain HTTP, canned XML).
#include "vsphere/client.h"

#include <atomic>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "httplib.h"

namespace ccm::vsphere {
namespace {

std::string Env(const std::string& body) {
  return "<?xml version=\"1.0\"?><soapenv:Envelope "
         "xmlns:soapenv=\"http://schemas.xmlsoap.org/soap/envelope/\" "
         "xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\"><soapenv:Body>" +
         body + "</soapenv:Body></soapenv:Envelope>";
}
std::string FaultXml(const std::string& type) {
  return Env("<soapenv:Fault><faultcode>ServerFaultCode</faultcode><faultstring>" + type +
             " happened</faultstring><detail><" + type + "Fault xmlns=\"urn:vim25\" xsi:type=\"" +
             type + "\"/></detail></soapenv:Fault>");
}

// Fake vCenter: sessions are cookie values; "Ping" needs a valid session.
class FakeVc {
 public:
  FakeVc() {
    srv_.Post("/sdk", [this](const httplib::Request& req, httplib::Response& res) {
      Handle(req, res);
    });
    port_ = srv_.bind_to_any_port("127.0.0.1");
    t_ = std::thread([this] { srv_.listen_after_bind(); });
    while (!srv_.is_running()) std::this_thread::yield();
  }
  ~FakeVc() {
    srv_.stop();
    t_.join();
  }
  std::string url() const { return absl::StrCat("http://127.0.0.1:", port_, "/sdk"); }

  std::atomic<int> logins{0}, logouts{0}, pings{0}, fail_503{0}, service_content{0};
  std::atomic<int> session{0};      // current valid session id
  std::string expected_password = "pass";
  std::atomic<bool> always_not_authenticated{false};

 private:
  void Handle(const httplib::Request& req, httplib::Response& res) {
    res.set_header("Content-Type", "text/xml");
    if (fail_503 > 0) {
      --fail_503;
      res.status = 503;
      res.set_content("busy", "text/plain");
      return;
    }
    const std::string& b = req.body;
    std::string cookie = req.get_header_value("Cookie");
    bool authed = !always_not_authenticated && session > 0 &&
                  cookie == absl::StrCat("vmware_soap_session=\"s", session.load(), "\"");
    if (absl::StrContains(b, "<RetrieveServiceContent")) {
      ++service_content;
      res.set_content(
          Env("<RetrieveServiceContentResponse xmlns=\"urn:vim25\"><returnval>"
              "<rootFolder type=\"Folder\">group-d1</rootFolder>"
              "<propertyCollector type=\"PropertyCollector\">propertyCollector</propertyCollector>"
              "<about><fullName>Fake</fullName><apiVersion>7.0</apiVersion></about>"
              "<sessionManager type=\"SessionManager\">SessionManager</sessionManager>"
              "</returnval></RetrieveServiceContentResponse>"),
          "text/xml");
    } else if (absl::StrContains(b, "<Login")) {
      ++logins;
      if (!absl::StrContains(b, "<password>" + expected_password + "</password>")) {
        res.status = 500;
        res.set_content(FaultXml("InvalidLogin"), "text/xml");
        return;
      }
      ++session;
      res.set_header("Set-Cookie",
                     absl::StrCat("vmware_soap_session=\"s", session.load(), "\"; Path=/; HttpOnly"));
      res.set_content(Env("<LoginResponse xmlns=\"urn:vim25\"><returnval><key>k</key>"
                          "</returnval></LoginResponse>"),
                      "text/xml");
    } else if (absl::StrContains(b, "<Logout")) {
      ++logouts;
      res.set_content(Env("<LogoutResponse xmlns=\"urn:vim25\"/>"), "text/xml");
    } else if (absl::StrContains(b, "<Ping")) {
      ++pings;
      if (!authed) {
        res.status = 500;
        res.set_content(FaultXml("NotAuthenticated"), "text/xml");
        return;
      }
      res.set_content(Env("<PingResponse xmlns=\"urn:vim25\"><returnval>pong</returnval>"
                          "</PingResponse>"),
                      "text/xml");
    } else {
      res.status = 500;
      res.set_content(FaultXml("NotSupported"), "text/xml");
    }
  }

  httplib::Server srv_;
  int port_ = 0;
  std::thread t_;
};

class MutableCreds : public CredentialSource {
 public:
  absl::StatusOr<Credentials> Get(absl::string_view) const override {
    absl::MutexLock l(&mu_);
    if (!have_) return absl::NotFoundError("secret not synced yet");
    return c_;
  }
  uint64_t generation() const override {
    absl::MutexLock l(&mu_);
    return gen_;
  }
  void Set(std::string user, std::string pass) {
    absl::MutexLock l(&mu_);
    c_ = {std::move(user), Secret(std::move(pass))};
    have_ = true;
    ++gen_;
  }

 private:
  mutable absl::Mutex mu_;
  Credentials c_;
  bool have_ = false;
  uint64_t gen_ = 0;
};

ClientOptions Opts(const FakeVc& vc) {
  ClientOptions o;
  o.url = vc.url();
  o.retry_backoff.initial = absl::Milliseconds(1);
  return o;
}

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
  EXPECT_TRUE(absl::StrContains(r.status().message(), "HTTP 503 from " + vc.url()))
      << r.status();
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
