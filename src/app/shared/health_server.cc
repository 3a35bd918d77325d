#include "app/shared/health_server.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "httplib.h"

namespace ccm::app {

HealthServer::HealthServer(metrics::Registry* registry) : registry_(registry) {}
HealthServer::~HealthServer() { Stop(); }

void HealthServer::AddCheck(const std::string& name, Check check, bool liveness) {
  absl::MutexLock lock(&mu_);
  checks_.push_back({name, std::move(check), liveness});
}

HealthServer::Result HealthServer::Evaluate(bool liveness_only, bool verbose,
                                            const std::string& exclude) const {
  std::vector<Named> checks;
  {
    absl::MutexLock lock(&mu_);
    checks = checks_;
  }
  std::vector<std::string> excluded = absl::StrSplit(exclude, ',', absl::SkipEmpty());
  std::string lines = "[+]ping ok\n";
  bool ok = true;
  for (const auto& c : checks) {
    if (liveness_only && !c.liveness) continue;
    if (std::find(excluded.begin(), excluded.end(), c.name) != excluded.end()) {
      absl::StrAppend(&lines, "[+]", c.name, " excluded: ok\n");
      continue;
    }
    absl::Status s = c.check();
    if (s.ok()) {
      absl::StrAppend(&lines, "[+]", c.name, " ok\n");
    } else {
      ok = false;
      // The reason is logged by the component; like the Go server, the body does not carry it
      // unless verbose (it may name hosts, never credentials).
      absl::StrAppend(&lines, "[-]", c.name, " failed: ", verbose ? s.message() : "reason withheld",
                      "\n");
    }
  }
  const char* what = liveness_only ? "livez" : "healthz";
  if (ok) return {200, verbose ? absl::StrCat(lines, what, " check passed\n") : "ok"};
  return {500, absl::StrCat(lines, what, " check failed\n")};
}

absl::StatusOr<int> HealthServer::Start(const std::string& bind_address, int port, KeyPair* kp) {
  if (kp != nullptr) {
    server_ = std::make_unique<httplib::SSLServer>(kp->cert.get(), kp->key.get());
  } else {
    server_ = std::make_unique<httplib::Server>();
  }
  // Probes and scrapes are few and short: two workers instead of httplib's default of eight
  // idle threads.
  server_->new_task_queue = [] { return new httplib::ThreadPool(2); };
  // SO_REUSEADDR only: httplib's default also sets SO_REUSEPORT, which would let a second
  // instance share the port silently instead of failing.
  server_->set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  // Short keep-alive so Stop() (on SIGTERM) is not held up by idle scraper connections.
  server_->set_keep_alive_timeout(1);
  server_->set_tcp_nodelay(true);
  auto health = [this](bool liveness) {
    return [this, liveness](const httplib::Request& req, httplib::Response& res) {
      Result r = Evaluate(liveness, req.has_param("verbose"), req.get_param_value("exclude"));
      res.status = r.code;
      res.set_content(r.body, "text/plain; charset=utf-8");
    };
  };
  server_->Get("/healthz", health(false));
  server_->Get("/readyz", health(false));
  server_->Get("/livez", health(true));
  server_->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    // Sent as is, with its length: httplib compresses only whole bodies, and gzip for these few
    // tens of KB would allocate ~300 KB of zlib state on every scrape.
    auto text = std::make_shared<std::string>(registry_->Render());
    res.set_content_provider(text->size(), "text/plain; version=0.0.4; charset=utf-8",
                             [text](size_t offset, size_t length, httplib::DataSink& sink) {
                               return sink.write(text->data() + offset, length);
                             });
  });
  int bound = port == 0 ? server_->bind_to_any_port(bind_address)
                        : (server_->bind_to_port(bind_address, port) ? port : -1);
  if (bound <= 0) {
    return absl::UnavailableError(
        absl::StrCat("secure port: cannot listen on ", bind_address, ":", port));
  }
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  while (!server_->is_running()) std::this_thread::yield();
  return bound;
}

void HealthServer::Stop() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace ccm::app
