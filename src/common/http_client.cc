#include "common/http_client.h"

#include <curl/curl.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <cctype>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ccm {
namespace {

struct CurlGlobal {
  CurlGlobal() { curl_global_init(CURL_GLOBAL_DEFAULT); }
};

void EnsureCurl() { static CurlGlobal g; }

int ThumbprintIndex() {
  static int idx = SSL_CTX_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return idx;
}

// At depth 0, accept the peer iff its SHA-1 matches the pinned thumbprint (chain ignored, as
// govmomi does when a thumbprint is configured).
int VerifyThumbprint(int preverify, X509_STORE_CTX* store) {
  if (X509_STORE_CTX_get_error_depth(store) != 0) return 1;
  SSL* ssl =
      static_cast<SSL*>(X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()));
  SSL_CTX* ctx = SSL_get_SSL_CTX(ssl);
  auto* want = static_cast<const std::string*>(SSL_CTX_get_ex_data(ctx, ThumbprintIndex()));
  X509* cert = X509_STORE_CTX_get_current_cert(store);
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (want == nullptr || cert == nullptr || !X509_digest(cert, EVP_sha1(), md, &n)) return 0;
  std::string got;
  for (unsigned int i = 0; i < n; ++i)
    absl::StrAppend(&got, i ? ":" : "", absl::Hex(md[i], absl::kZeroPad2));
  if (absl::AsciiStrToUpper(got) == *want) {
    X509_STORE_CTX_set_error(store, X509_V_OK);
    return 1;
  }
  return 0;
}

// Every connection: idle connections give their TLS record buffers (~34 KB each) back, and a
// pinned thumbprint (userdata: the normalised pin, empty for none) replaces chain verification.
CURLcode SslCtxSetup(CURL*, void* sslctx, void* userdata) {
  auto* ctx = static_cast<SSL_CTX*>(sslctx);
  SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
  if (!static_cast<const std::string*>(userdata)->empty()) {
    SSL_CTX_set_ex_data(ctx, ThumbprintIndex(), userdata);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, VerifyThumbprint);
  }
  return CURLE_OK;
}

size_t OnHeader(char* data, size_t size, size_t n, void* user) {
  auto* resp = static_cast<HttpResponse*>(user);
  absl::string_view line(data, size * n);
  if (absl::StartsWith(line, "HTTP/")) {
    resp->headers.clear();  // a new response (redirect, 100-continue)
    return size * n;
  }
  auto colon = line.find(':');
  if (colon != absl::string_view::npos) {
    resp->headers.emplace_back(absl::AsciiStrToLower(line.substr(0, colon)),
                               std::string(absl::StripAsciiWhitespace(line.substr(colon + 1))));
  }
  return size * n;
}

size_t OnBody(char* data, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(data, size * n);
  return size * n;
}

struct StreamState {
  HttpResponse* resp;
  CURL* curl;
  const std::function<bool(absl::string_view)>* on_data;
  const std::atomic<bool>* cancel;
  bool stopped = false;
  bool delivered = false;  // on_data was called
};

size_t OnStreamBody(char* data, size_t size, size_t n, void* user) {
  auto* st = static_cast<StreamState*>(user);
  long code = 0;
  curl_easy_getinfo(st->curl, CURLINFO_RESPONSE_CODE, &code);
  if (code < 200 || code > 299) {
    st->resp->body.append(data, size * n);
    return size * n;
  }
  st->delivered = true;
  if (!(*st->on_data)(absl::string_view(data, size * n))) {
    st->stopped = true;
    return 0;
  }
  return size * n;
}

// What ends a transfer early: the caller's cancel flag, or the client's deadline.
struct Abort {
  const std::atomic<bool>* cancel = nullptr;
  const std::atomic<int64_t>* deadline_ns = nullptr;
};

int OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  const auto* a = static_cast<const Abort*>(user);
  if (a->cancel != nullptr && a->cancel->load()) return 1;
  const int64_t deadline = a->deadline_ns->load();
  return deadline != INT64_MAX && absl::ToUnixNanos(absl::Now()) >= deadline ? 1 : 0;
}

absl::Status CurlError(CURLcode rc, const std::string& method, const std::string& url,
                       const char* detail) {
  std::string msg = absl::StrCat(method, " ", url, ": ", curl_easy_strerror(rc));
  if (detail != nullptr && detail[0] != '\0') absl::StrAppend(&msg, " (", detail, ")");
  switch (rc) {
    case CURLE_OPERATION_TIMEDOUT:
      return absl::DeadlineExceededError(msg);
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
      return absl::FailedPreconditionError(absl::StrCat("TLS verification failed: ", msg));
    case CURLE_ABORTED_BY_CALLBACK:
      return absl::CancelledError(msg);
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
      return absl::InvalidArgumentError(msg);
    default:
      return absl::UnavailableError(msg);
  }
}

// Rounded up: a request bounded by a deadline ends at it, never just before.
long Millis(absl::Duration d) {
  return static_cast<long>(absl::ToInt64Milliseconds(absl::Ceil(d, absl::Milliseconds(1))));
}

}  // namespace

struct HttpClient::Handle {
  CURL* curl = nullptr;
  std::string pinned;  // normalised thumbprint, kept alive for the SSL_CTX ex_data
  curl_slist* connect_to = nullptr;
  char errbuf[CURL_ERROR_SIZE] = {};
  ~Handle() {
    if (curl) curl_easy_cleanup(curl);
    curl_slist_free_all(connect_to);
  }
};

std::string NormalizeThumbprint(absl::string_view t) {
  std::string hex;
  for (char c : t)
    if (std::isxdigit(static_cast<unsigned char>(c))) hex += static_cast<char>(std::toupper(c));
  std::string out;
  for (size_t i = 0; i < hex.size(); i += 2) absl::StrAppend(&out, i ? ":" : "", hex.substr(i, 2));
  return out;
}

std::string HttpResponse::header(absl::string_view name) const {
  for (const auto& [k, v] : headers)
    if (absl::EqualsIgnoreCase(k, name)) return v;
  return "";
}

std::vector<std::string> HttpResponse::all_headers(absl::string_view name) const {
  std::vector<std::string> out;
  for (const auto& [k, v] : headers)
    if (absl::EqualsIgnoreCase(k, name)) out.push_back(v);
  return out;
}

HttpClient::HttpClient(HttpClientOptions options) : options_(std::move(options)) { EnsureCurl(); }
HttpClient::~HttpClient() = default;

std::unique_ptr<HttpClient::Handle> HttpClient::Acquire() {
  {
    absl::MutexLock lock(&mu_);
    if (!idle_.empty()) {
      auto h = std::move(idle_.back());
      idle_.pop_back();
      return h;
    }
  }
  auto h = std::make_unique<Handle>();
  h->curl = curl_easy_init();
  CURL* c = h->curl;
  const TlsOptions& tls = options_.tls;
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, h->errbuf);
  curl_easy_setopt(c, CURLOPT_USERAGENT, options_.user_agent.c_str());
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, Millis(options_.connect_timeout));
  curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
  // Request bodies here are small JSON/SOAP documents: a 16 KiB upload buffer per pooled handle
  // instead of libcurl's 64 KiB.
  curl_easy_setopt(c, CURLOPT_UPLOAD_BUFFERSIZE, 16384L);
  if (!options_.connect_to.empty()) {
    h->connect_to = curl_slist_append(nullptr, options_.connect_to.c_str());
    curl_easy_setopt(c, CURLOPT_CONNECT_TO, h->connect_to);
  }
  curl_easy_setopt(c, CURLOPT_SSL_CTX_FUNCTION, SslCtxSetup);
  curl_easy_setopt(c, CURLOPT_SSL_CTX_DATA, &h->pinned);
  if (!tls.thumbprint.empty()) {
    h->pinned = NormalizeThumbprint(tls.thumbprint);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
  } else if (tls.insecure) {
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  if (!tls.ca_file.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, tls.ca_file.c_str());
  if (!tls.ca_pem.empty()) {
    curl_blob blob{const_cast<char*>(tls.ca_pem.data()), tls.ca_pem.size(), CURL_BLOB_COPY};
    curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &blob);
  }
  if (!tls.client_cert_file.empty())
    curl_easy_setopt(c, CURLOPT_SSLCERT, tls.client_cert_file.c_str());
  if (!tls.client_cert_pem.empty()) {
    curl_blob blob{const_cast<char*>(tls.client_cert_pem.data()), tls.client_cert_pem.size(),
                   CURL_BLOB_COPY};
    curl_easy_setopt(c, CURLOPT_SSLCERT_BLOB, &blob);
    curl_easy_setopt(c, CURLOPT_SSLCERTTYPE, "PEM");
  }
  if (!tls.client_key_file.empty())
    curl_easy_setopt(c, CURLOPT_SSLKEY, tls.client_key_file.c_str());
  if (!tls.client_key_pem.empty()) {
    curl_blob blob{const_cast<char*>(tls.client_key_pem.data()), tls.client_key_pem.size(),
                   CURL_BLOB_COPY};
    curl_easy_setopt(c, CURLOPT_SSLKEY_BLOB, &blob);
    curl_easy_setopt(c, CURLOPT_SSLKEYTYPE, "PEM");
  }
  return h;
}

void HttpClient::Release(std::unique_ptr<Handle> h) {
  absl::MutexLock lock(&mu_);
  if (idle_.size() < 16) idle_.push_back(std::move(h));
}

void HttpClient::CloseIdleConnections() {
  absl::MutexLock lock(&mu_);
  idle_.clear();
}

namespace {

// Applies the per-request options and returns the header list (caller frees).
curl_slist* Prepare(CURL* c, const HttpRequest& req, const HttpClientOptions& opt,
                    HttpResponse* resp) {
  curl_easy_setopt(c, CURLOPT_URL, req.url.c_str());
  curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, req.method.c_str());
  curl_easy_setopt(c, CURLOPT_NOBODY, req.method == "HEAD" ? 1L : 0L);
  if (!req.body.empty() || req.method == "POST" || req.method == "PUT" || req.method == "PATCH") {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, req.body.data());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
  } else {
    curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, req.method.c_str());
  }
  curl_slist* hdrs = nullptr;
  hdrs = curl_slist_append(hdrs, "Expect:");
  for (const auto& [k, v] : req.headers)
    hdrs = curl_slist_append(hdrs, absl::StrCat(k, ": ", v).c_str());
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, resp);
  return hdrs;
}

}  // namespace

namespace {

// Failures that mean the request never reached the server (a pooled keep-alive connection the
// server had closed, or a handshake cut short), so sending it again on a fresh connection is safe
// for any method. Failures after sending (GOT_NOTHING, RECV_ERROR) are retried only for reads.
bool RetryOnFreshConnection(CURLcode rc, const std::string& method) {
  if (rc == CURLE_SEND_ERROR || rc == CURLE_SSL_CONNECT_ERROR) return true;
  const bool read = method == "GET" || method == "HEAD";
  return read && (rc == CURLE_GOT_NOTHING || rc == CURLE_RECV_ERROR);
}

}  // namespace

void HttpClient::SetDeadline(absl::Time deadline) {
  const int64_t ns = absl::ToUnixNanos(deadline);
  int64_t cur = deadline_ns_.load();
  while (ns < cur && !deadline_ns_.compare_exchange_weak(cur, ns)) {
  }
}

bool HttpClient::PastDeadline() const {
  const int64_t d = deadline_ns_.load();
  return d != INT64_MAX && absl::ToUnixNanos(absl::Now()) >= d;
}

absl::StatusOr<absl::Duration> HttpClient::Bounded(const HttpRequest& req,
                                                   absl::Duration base) const {
  const int64_t d = deadline_ns_.load();
  if (d == INT64_MAX && req.deadline == absl::InfiniteFuture()) return base;
  const absl::Time now = absl::Now();
  if (d != INT64_MAX && absl::FromUnixNanos(d) <= now) {
    return absl::CancelledError(
        absl::StrCat(req.method, " ", req.url, ": not sent, the client is shutting down"));
  }
  if (req.deadline <= now) {
    return absl::DeadlineExceededError(
        absl::StrCat(req.method, " ", req.url, ": not sent, the caller's deadline has passed"));
  }
  const absl::Time end =
      std::min(d == INT64_MAX ? absl::InfiniteFuture() : absl::FromUnixNanos(d), req.deadline);
  const absl::Duration left = end - now;
  return base > absl::ZeroDuration() ? std::min(base, left) : left;
}

absl::StatusOr<HttpResponse> HttpClient::Do(const HttpRequest& req) {
  for (int attempt = 0;; ++attempt) {
    absl::StatusOr<absl::Duration> timeout =
        Bounded(req, req.timeout > absl::ZeroDuration() ? req.timeout : options_.timeout);
    if (!timeout.ok()) return timeout.status();
    Abort abort{nullptr, &deadline_ns_};
    auto h = Acquire();
    CURL* c = h->curl;
    HttpResponse resp;
    curl_slist* hdrs = Prepare(c, req, options_, &resp);
    // gzip only: it is what kube-apiserver and vCenter offer, and a brotli/zstd answer from some
    // other server would cost a multi-MB decoder state per connection.
    curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "gzip");
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, OnBody);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &resp.body);
    // The progress callback only ends a transfer that outlives a deadline set while it ran.
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, OnProgress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, &abort);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, Millis(*timeout));
    h->errbuf[0] = '\0';
    CURLcode rc = curl_easy_perform(c);
    curl_slist_free_all(hdrs);
    if (rc != CURLE_OK) {
      // The handle is dropped with its connection: it may be broken. Every pooled connection may
      // be stale too (the server closed idle ones), so the retry starts from a clean pool.
      if (attempt == 0 && RetryOnFreshConnection(rc, req.method)) {
        CloseIdleConnections();
        continue;
      }
      return CurlError(rc, req.method, req.url, h->errbuf);
    }
    long code = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    resp.status = static_cast<int>(code);
    Release(std::move(h));
    return resp;
  }
}

absl::StatusOr<HttpResponse> HttpClient::Stream(
    const HttpRequest& req, const std::function<bool(absl::string_view)>& on_data,
    const std::atomic<bool>* cancel) {
  for (int attempt = 0;; ++attempt) {
    absl::StatusOr<absl::Duration> timeout = Bounded(req, req.timeout);
    if (!timeout.ok()) return timeout.status();
    Abort abort{cancel, &deadline_ns_};
    auto h = Acquire();
    CURL* c = h->curl;
    HttpResponse resp;
    curl_slist* hdrs = Prepare(c, req, options_, &resp);
    StreamState st{&resp, c, &on_data, cancel};
    curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, req.accept_gzip ? "gzip" : nullptr);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, OnStreamBody);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &st);
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, OnProgress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, &abort);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS,
                     *timeout > absl::ZeroDuration() ? Millis(*timeout) : 0L);
    h->errbuf[0] = '\0';
    CURLcode rc = curl_easy_perform(c);
    curl_slist_free_all(hdrs);
    long code = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    resp.status = static_cast<int>(code);
    if (rc == CURLE_WRITE_ERROR && st.stopped) return resp;
    if (rc != CURLE_OK) {
      // Only failures before the request left (never after: a stream's consumer may have seen
      // data, and a watch's caller reconnects on its own).
      if (attempt == 0 && !st.delivered &&
          (rc == CURLE_SEND_ERROR || rc == CURLE_SSL_CONNECT_ERROR)) {
        CloseIdleConnections();
        continue;
      }
      return CurlError(rc, req.method, req.url, h->errbuf);
    }
    // A finished stream's connection is reusable.
    Release(std::move(h));
    return resp;
  }
}

}  // namespace ccm
