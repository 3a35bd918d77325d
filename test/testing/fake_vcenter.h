#pragma once
// Test-only: a tiny in-process fake vim25 endpoint (plain HTTP, canned XML) and a credential
// source tests can change, shared by the Client tests.

#include <algorithm>
#include <atomic>
#include <deque>
#include <string>
#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "httplib.h"
#include "vsphere/client.h"
#include "vsphere/credential_source.h"

namespace ccm::vsphere {

inline std::string Env(const std::string& body) {
  return "<?xml version=\"1.0\"?><soapenv:Envelope "
         "xmlns:soapenv=\"http://schemas.xmlsoap.org/soap/envelope/\" "
         "xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\"><soapenv:Body>" +
         body + "</soapenv:Body></soapenv:Envelope>";
}
inline std::string FaultXml(const std::string& type) {
  return Env("<soapenv:Fault><faultcode>ServerFaultCode</faultcode><faultstring>" + type +
             " happened</faultstring><detail><" + type + "Fault xmlns=\"urn:vim25\" xsi:type=\"" +
             type + "\"/></detail></soapenv:Fault>");
}

// Fake vCenter: sessions are cookie values; "Ping" and "WaitForUpdatesEx" need a valid session.
class FakeVc {
 public:
  // One canned WaitForUpdatesEx answer, sent in chunks of `chunk` bytes (chunked encoding).
  // `drop_after`: close the connection after that many body bytes (a dropped answer).
  struct Answer {
    int status = 200;
    std::string body;
    size_t chunk = 64;
    size_t drop_after = std::string::npos;
  };

  FakeVc() {
    srv_.Post("/sdk",
              [this](const httplib::Request& req, httplib::Response& res) { Handle(req, res); });
    port_ = srv_.bind_to_any_port("127.0.0.1");
    t_ = std::thread([this] { srv_.listen_after_bind(); });
    while (!srv_.is_running()) std::this_thread::yield();
  }
  ~FakeVc() {
    srv_.stop();
    t_.join();
  }
  std::string url() const { return absl::StrCat("http://127.0.0.1:", port_, "/sdk"); }

  // WaitForUpdatesEx answers, one per authenticated request; the last one repeats.
  void QueueWaitAnswer(Answer a) {
    absl::MutexLock l(&mu_);
    answers_.push_back(std::move(a));
  }

  std::atomic<int> logins{0}, logouts{0}, pings{0}, fail_503{0}, service_content{0}, waits{0};
  std::atomic<int> gzip_waits{0};
  std::atomic<int> retrieves{0};  // RetrievePropertiesEx requests
  std::atomic<int> instance{
      1};  // about.instanceUuid is "i<instance>"  // WaitForUpdatesEx requests that accept gzip
  std::atomic<int> session{0};  // current valid session id
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
              "<about><fullName>Fake</fullName><apiVersion>7.0</apiVersion><instanceUuid>i" +
              std::to_string(instance.load()) +
              "</instanceUuid></about>"
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
      res.set_header("Set-Cookie", absl::StrCat("vmware_soap_session=\"s", session.load(),
                                                "\"; Path=/; HttpOnly"));
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
    } else if (absl::StrContains(b, "<RetrievePropertiesEx")) {
      ++retrieves;
      // Like vCenter and govmomi's simulator: an unknown session is reported per property.
      std::string prop =
          authed ? "<propSet><name>name</name><val xsi:type=\"xsd:string\">dc1</val></propSet>"
                 : "<missingSet><path>name</path><fault><fault xsi:type=\"NotAuthenticated\">"
                   "<object type=\"Datacenter\">datacenter-2</object><privilegeId>System.Read"
                   "</privilegeId></fault><localizedMessage></localizedMessage></fault>"
                   "</missingSet>";
      res.set_content(Env("<RetrievePropertiesExResponse xmlns=\"urn:vim25\"><returnval><objects>"
                          "<obj type=\"Datacenter\">datacenter-2</obj>" +
                          prop + "</objects></returnval></RetrievePropertiesExResponse>"),
                      "text/xml");
    } else if (absl::StrContains(b, "<WaitForUpdatesEx")) {
      ++waits;
      if (absl::StrContains(req.get_header_value("Accept-Encoding"), "gzip")) ++gzip_waits;
      if (!authed) {
        res.status = 500;
        res.set_content(FaultXml("NotAuthenticated"), "text/xml");
        return;
      }
      Send(NextAnswer(), res);
    } else {
      res.status = 500;
      res.set_content(FaultXml("NotSupported"), "text/xml");
    }
  }

  Answer NextAnswer() {
    absl::MutexLock l(&mu_);
    if (answers_.empty()) return Answer{500, FaultXml("NotSupported")};
    Answer a = answers_.front();
    if (answers_.size() > 1) answers_.pop_front();
    return a;
  }

  static void Send(Answer a, httplib::Response& res) {
    res.status = a.status;
    // text/xml is gzipped when the client asks (it does: that path is tested too), but the
    // compressor holds data back, so a dropped answer would lose the part that should arrive.
    const bool drops = a.drop_after < a.body.size();
    res.headers.erase("Content-Type");
    res.set_chunked_content_provider(drops ? "application/octet-stream" : "text/xml",
                                     [a = std::move(a)](size_t offset, httplib::DataSink& sink) {
                                       size_t end = std::min(a.body.size(), a.drop_after);
                                       if (offset < end) {
                                         size_t n = std::min(a.chunk, end - offset);
                                         sink.write(a.body.data() + offset, n);
                                         return true;
                                       }
                                       if (end < a.body.size())
                                         return false;  // closes the connection mid-answer
                                       sink.done();
                                       return true;
                                     });
  }

  httplib::Server srv_;
  int port_ = 0;
  std::thread t_;
  absl::Mutex mu_;
  std::deque<Answer> answers_;
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

inline ClientOptions FakeVcOptions(const FakeVc& vc) {
  ClientOptions o;
  o.url = vc.url();
  o.retry_backoff.initial = absl::Milliseconds(1);
  return o;
}

}  // namespace ccm::vsphere
