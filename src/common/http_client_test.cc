#include "common/http_client.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "httplib.h"

namespace ccm {
namespace {

std::string Run(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  char buf[512];
  while (p && fgets(buf, sizeof buf, p)) out += buf;
  if (p) pclose(p);
  return out;
}

// A self-signed certificate for 127.0.0.1/localhost, made once per test binary.
struct TestCert {
  std::string dir, cert, key, sha1;
  TestCert() {
    dir = std::filesystem::temp_directory_path() / absl::StrCat("ccm-http-test-", getpid());
    std::filesystem::create_directories(dir);
    cert = dir + "/cert.pem";
    key = dir + "/key.pem";
    Run(absl::StrCat("openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=localhost",
                     " -addext subjectAltName=DNS:localhost,IP:127.0.0.1 -keyout ", key, " -out ",
                     cert, " 2>/dev/null"));
    std::string fp = Run(absl::StrCat("openssl x509 -noout -fingerprint -sha1 -in ", cert));
    sha1 = fp.substr(fp.find('=') + 1);
    while (!sha1.empty() && (sha1.back() == '\n' || sha1.back() == '\r')) sha1.pop_back();
  }
  ~TestCert() { std::filesystem::remove_all(dir); }
};

TestCert& Cert() {
  static TestCert* c = new TestCert();
  return *c;
}

template <typename Server>
class Serving {
 public:
  explicit Serving(Server& s) : s_(s) {
    port_ = s_.bind_to_any_port("127.0.0.1");
    t_ = std::thread([this] { s_.listen_after_bind(); });
    while (!s_.is_running()) std::this_thread::yield();
  }
  ~Serving() {
    s_.stop();
    t_.join();
  }
  int port() const { return port_; }

 private:
  Server& s_;
  int port_;
  std::thread t_;
};

void AddRoutes(httplib::Server& s) {
  s.Get("/hello", [](const httplib::Request& req, httplib::Response& res) {
    res.set_header("X-Test", "yes");
    res.set_content("hello " + req.get_header_value("User-Agent"), "text/plain");
  });
  s.Post("/echo", [](const httplib::Request& req, httplib::Response& res) {
    res.status = 201;
    res.set_content(req.method + ":" + req.body, "text/plain");
  });
  s.Get("/slow", [](const httplib::Request&, httplib::Response& res) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    res.set_content("late", "text/plain");
  });
  s.Get("/stream", [](const httplib::Request&, httplib::Response& res) {
    res.set_chunked_content_provider("text/plain", [](size_t, httplib::DataSink& sink) {
      for (int i = 0; i < 3; ++i) sink.write("chunk\n", 6);
      sink.done();
      return true;
    });
  });
  s.Get("/forever", [](const httplib::Request&, httplib::Response& res) {
    res.set_chunked_content_provider("text/plain", [](size_t offset, httplib::DataSink& sink) {
      if (offset > 5 * 200) return false;  // bounded: 200 ticks at most
      sink.write("tick\n", 5);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      return true;
    });
  });
}

TEST(HttpClientTest, GetPostHeadersAndUserAgent) {
  httplib::Server s;
  AddRoutes(s);
  Serving srv(s);
  HttpClient c({.user_agent = "test-agent/1.0"});
  auto r = c.Do({.url = absl::StrCat("http://127.0.0.1:", srv.port(), "/hello")});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "hello test-agent/1.0");
  EXPECT_EQ(r->header("x-TEST"), "yes");
  auto p = c.Do({.method = "POST",
                 .url = absl::StrCat("http://127.0.0.1:", srv.port(), "/echo"),
                 .body = "data"});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->status, 201);
  EXPECT_EQ(p->body, "POST:data");
  auto missing = c.Do({.url = absl::StrCat("http://127.0.0.1:", srv.port(), "/nope")});
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->status, 404);
}

TEST(HttpClientTest, ConnectionRefusedIsUnavailableAndNamesUrl) {
  int port;
  {
    httplib::Server s;
    Serving srv(s);
    port = srv.port();
  }
  HttpClient c({});
  auto r = c.Do({.url = absl::StrCat("http://127.0.0.1:", port, "/x")});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find(absl::StrCat("127.0.0.1:", port, "/x")), std::string::npos);
}

// A raw server: the first `drops` connections are closed without an answer, later ones get 200.
class DroppingServer {
 public:
  explicit DroppingServer(int drops) : drops_(drops) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    socklen_t len = sizeof(a);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    listen(fd_, 8);
    thread_ = std::thread([this] {
      for (int i = 0;; ++i) {
        int c = accept(fd_, nullptr, nullptr);
        if (c < 0) return;
        char buf[4096];
        ssize_t n = recv(c, buf, sizeof(buf), 0);
        if (n > 0 && i >= drops_) {
          const char kOk[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";
          (void)!send(c, kOk, sizeof(kOk) - 1, 0);
        }
        close(c);
      }
    });
  }
  ~DroppingServer() {
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    thread_.join();
  }
  int port() const { return port_; }

 private:
  int drops_, fd_, port_;
  std::thread thread_;
};

TEST(HttpClientTest, ReadIsRetriedOnceOnAFreshConnectionWhenTheServerDropsIt) {
  DroppingServer one_drop(1);
  HttpClient c({});
  auto r = c.Do({.url = absl::StrCat("http://127.0.0.1:", one_drop.port(), "/x")});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->body, "ok");

  DroppingServer two_drops(2);
  auto twice = c.Do({.url = absl::StrCat("http://127.0.0.1:", two_drops.port(), "/x")});
  ASSERT_FALSE(twice.ok()) << "only one retry";
  EXPECT_EQ(twice.status().code(), absl::StatusCode::kUnavailable);

  // A POST that may have reached the server is not sent twice.
  DroppingServer post_drop(1);
  auto post = c.Do({.method = "POST",
                    .url = absl::StrCat("http://127.0.0.1:", post_drop.port(), "/x"),
                    .body = "data"});
  ASSERT_FALSE(post.ok());
  EXPECT_EQ(post.status().code(), absl::StatusCode::kUnavailable) << post.status();
}

TEST(HttpClientTest, TimeoutIsDeadlineExceeded) {
  httplib::Server s;
  AddRoutes(s);
  Serving srv(s);
  HttpClient c({});
  auto r = c.Do({.url = absl::StrCat("http://127.0.0.1:", srv.port(), "/slow"),
                 .timeout = absl::Milliseconds(200)});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded) << r.status();
}

// Issue 43: a stopping process bounds its calls. A request under way when the deadline is set
// ends soon after the deadline (not at its own 60 s timeout); one started after it is not sent.
TEST(HttpClientTest, DeadlineEndsARequestUnderWayAndRefusesLaterOnes) {
  httplib::Server s;
  AddRoutes(s);
  Serving srv(s);
  HttpClient c({});
  const std::string slow = absl::StrCat("http://127.0.0.1:", srv.port(), "/slow");
  absl::Notification started;
  absl::StatusOr<HttpResponse> under_way;
  std::thread t([&] {
    started.Notify();
    under_way = c.Do({.url = slow, .timeout = absl::Seconds(60)});
  });
  started.WaitForNotification();
  c.SetDeadline(absl::Now() + absl::Milliseconds(100));
  t.join();  // /slow answers after 1.5 s: the request ends at the deadline instead
  ASSERT_FALSE(under_way.ok());
  EXPECT_TRUE(absl::IsCancelled(under_way.status()) || absl::IsDeadlineExceeded(under_way.status()))
      << under_way.status();
  EXPECT_TRUE(c.PastDeadline());
  auto later = c.Do({.url = absl::StrCat("http://127.0.0.1:", srv.port(), "/hello")});
  ASSERT_FALSE(later.ok());
  EXPECT_EQ(later.status().code(), absl::StatusCode::kCancelled);
  EXPECT_TRUE(absl::StrContains(later.status().message(), "shutting down")) << later.status();
  // The earliest deadline wins.
  c.SetDeadline(absl::Now() + absl::Hours(1));
  EXPECT_TRUE(c.PastDeadline());
}

// A caller's deadline (HttpRequest::deadline) ends its own request and no other.
TEST(HttpClientTest, ACallersDeadlineEndsItsRequestOnly) {
  httplib::Server s;
  AddRoutes(s);
  Serving srv(s);
  HttpClient c({});
  const std::string slow = absl::StrCat("http://127.0.0.1:", srv.port(), "/slow");
  const absl::Time start = absl::Now();
  auto cut = c.Do({.url = slow,
                   .timeout = absl::Seconds(60),
                   .deadline = absl::Now() + absl::Milliseconds(200)});
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.status().code(), absl::StatusCode::kDeadlineExceeded) << cut.status();
  EXPECT_LT(absl::Now() - start, absl::Milliseconds(1400)) << "/slow answers after 1.5 s";
  auto late = c.Do({.url = slow, .deadline = absl::Now() - absl::Seconds(1)});
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_TRUE(absl::StrContains(late.status().message(), "caller's deadline")) << late.status();
  EXPECT_FALSE(c.PastDeadline()) << "the client itself is not stopping";
  auto hello = c.Do({.url = absl::StrCat("http://127.0.0.1:", srv.port(), "/hello")});
  ASSERT_TRUE(hello.ok()) << hello.status();
}

TEST(HttpClientTest, StreamDeliversChunksAndCanStop) {
  httplib::Server s;
  AddRoutes(s);
  Serving srv(s);
  HttpClient c({});
  std::string got;
  auto r = c.Stream(
      {.url = absl::StrCat("http://127.0.0.1:", srv.port(), "/stream")},
      [&](absl::string_view d) {
        got.append(d.data(), d.size());
        return true;
      },
      nullptr);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(got, "chunk\nchunk\nchunk\n");
}

TEST(HttpClientTest, StreamStopsWhenCallbackSaysSo) {
  httplib::Server s;
  AddRoutes(s);
  Serving srv(s);
  HttpClient c({});

  int seen = 0;
  auto stopped = c.Stream(
      {.url = absl::StrCat("http://127.0.0.1:", srv.port(), "/forever")},
      [&](absl::string_view) { return ++seen < 3; }, nullptr);
  ASSERT_TRUE(stopped.ok()) << stopped.status();
  EXPECT_EQ(seen, 3);
}

TEST(HttpClientTest, StreamCancel) {
  httplib::Server s;
  AddRoutes(s);
  Serving srv(s);
  HttpClient c({});

  std::atomic<bool> cancel{false};
  auto cancelled = c.Stream(
      {.url = absl::StrCat("http://127.0.0.1:", srv.port(), "/forever")},
      [&](absl::string_view) {
        cancel = true;
        return true;
      },
      &cancel);
  ASSERT_FALSE(cancelled.ok());
  EXPECT_EQ(cancelled.status().code(), absl::StatusCode::kCancelled);
}

// The SOAP client streams big answers: a POST whose status is reported, non-2xx bodies kept
// whole, and gzip inflated on the way when asked for.
TEST(HttpClientTest, StreamPostStatusErrorBodiesAndGzip) {
  httplib::Server s;
  AddRoutes(s);
  const std::string big(100000, 'x');
  s.Post("/big", [&](const httplib::Request& req, httplib::Response& res) {
    res.set_header("X-Accept-Encoding", req.get_header_value("Accept-Encoding"));
    res.set_content(big, "text/plain");  // httplib gzips it when the client accepts gzip
  });
  Serving srv(s);
  HttpClient c({});
  std::string got;
  auto collect = [&](absl::string_view d) {
    got.append(d.data(), d.size());
    return true;
  };
  const std::string base = absl::StrCat("http://127.0.0.1:", srv.port());
  auto echo = c.Stream({.method = "POST", .url = base + "/echo", .body = "data"}, collect, nullptr);
  ASSERT_TRUE(echo.ok()) << echo.status();
  EXPECT_EQ(echo->status, 201);
  EXPECT_EQ(got, "POST:data");

  got.clear();
  auto missing = c.Stream({.method = "POST", .url = base + "/nope", .body = "x"}, collect, nullptr);
  ASSERT_TRUE(missing.ok()) << missing.status();
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(got, "");  // a non-2xx body is not streamed

  auto zipped = c.Stream({.method = "POST", .url = base + "/big", .body = "x", .accept_gzip = true},
                         collect, nullptr);
  ASSERT_TRUE(zipped.ok()) << zipped.status();
  EXPECT_EQ(zipped->header("x-accept-encoding"), "gzip");
  EXPECT_EQ(zipped->header("content-encoding"), "gzip");
  EXPECT_EQ(got, big);
}

class HttpsTest : public ::testing::Test {
 protected:
  HttpsTest() : server_(Cert().cert.c_str(), Cert().key.c_str()) {
    AddRoutes(server_);
    serving_ = std::make_unique<Serving<httplib::SSLServer>>(server_);
    url_ = absl::StrCat("https://127.0.0.1:", serving_->port(), "/hello");
  }
  httplib::SSLServer server_;
  std::unique_ptr<Serving<httplib::SSLServer>> serving_;
  std::string url_;
};

TEST_F(HttpsTest, UnknownCaIsRefused) {
  HttpClient c({});
  auto r = c.Do({.url = url_});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition) << r.status();
  EXPECT_NE(r.status().message().find("TLS verification failed"), std::string::npos);
}

TEST_F(HttpsTest, CaFileAndCaPemVerify) {
  HttpClient by_file({.tls = {.ca_file = Cert().cert}});
  auto r = by_file.Do({.url = url_});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 200);
  std::ifstream in(Cert().cert);
  std::string pem((std::istreambuf_iterator<char>(in)), {});
  HttpClient by_pem({.tls = {.ca_pem = pem}});
  auto r2 = by_pem.Do({.url = url_});
  ASSERT_TRUE(r2.ok()) << r2.status();
}

TEST_F(HttpsTest, ThumbprintPinning) {
  std::string lower = Cert().sha1;
  for (auto& ch : lower) ch = static_cast<char>(std::tolower(ch));
  HttpClient pinned({.tls = {.thumbprint = lower}});
  auto r = pinned.Do({.url = url_});
  ASSERT_TRUE(r.ok()) << r.status();
  HttpClient wrong(
      {.tls = {.thumbprint = "00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF:00:11:22:33"}});
  auto w = wrong.Do({.url = url_});
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().code(), absl::StatusCode::kOk);
}

TEST_F(HttpsTest, InsecureSkipsVerification) {
  HttpClient c({.tls = {.insecure = true}});
  auto r = c.Do({.url = url_});
  ASSERT_TRUE(r.ok()) << r.status();
}

TEST(ThumbprintTest, Normalize) {
  EXPECT_EQ(NormalizeThumbprint("ab:cd:0f"), "AB:CD:0F");
  EXPECT_EQ(NormalizeThumbprint("abcd0f"), "AB:CD:0F");
}

}  // namespace
}  // namespace ccm
