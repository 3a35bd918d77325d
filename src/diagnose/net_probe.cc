#include "diagnose/net_probe.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ccm::diagnose {
namespace {

struct AddrInfoFree {
  void operator()(addrinfo* a) const { freeaddrinfo(a); }
};
using AddrInfo = std::unique_ptr<addrinfo, AddrInfoFree>;

absl::StatusOr<AddrInfo> Lookup(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res);
  if (rc != 0) return absl::NotFoundError(gai_strerror(rc));
  return AddrInfo(res);
}

std::string AddressText(const addrinfo* a) {
  char buf[INET6_ADDRSTRLEN] = {};
  const void* src =
      a->ai_family == AF_INET6
          ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in6*>(a->ai_addr)->sin6_addr)
          : &reinterpret_cast<const sockaddr_in*>(a->ai_addr)->sin_addr;
  inet_ntop(a->ai_family, src, buf, sizeof buf);
  return buf;
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// A connected socket (blocking again after the connect), or the error.
absl::StatusOr<std::unique_ptr<Fd>> Connect(const addrinfo* a, absl::Duration timeout) {
  auto fd = std::make_unique<Fd>(socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd->get() < 0) return absl::UnavailableError(strerror(errno));
  int flags = fcntl(fd->get(), F_GETFL);
  fcntl(fd->get(), F_SETFL, flags | O_NONBLOCK);
  if (connect(fd->get(), a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS) {
    return absl::UnavailableError(strerror(errno));
  }
  pollfd p{fd->get(), POLLOUT, 0};
  int rc = poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(timeout)));
  if (rc == 0) {
    return absl::UnavailableError(absl::StrCat("timed out after ", absl::FormatDuration(timeout)));
  }
  int err = 0;
  socklen_t len = sizeof err;
  getsockopt(fd->get(), SOL_SOCKET, SO_ERROR, &err, &len);
  if (rc < 0 || err != 0) return absl::UnavailableError(strerror(rc < 0 ? errno : err));
  fcntl(fd->get(), F_SETFL, flags);
  timeval tv{static_cast<time_t>(absl::ToInt64Seconds(timeout)), 0};
  setsockopt(fd->get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd->get(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  return fd;
}

absl::StatusOr<std::unique_ptr<Fd>> ConnectAny(const std::string& host, int port,
                                               absl::Duration timeout) {
  absl::StatusOr<AddrInfo> ai = Lookup(host, port);
  if (!ai.ok()) return ai.status();
  absl::Status last = absl::UnavailableError("no address");
  for (const addrinfo* a = ai->get(); a != nullptr; a = a->ai_next) {
    absl::StatusOr<std::unique_ptr<Fd>> fd = Connect(a, timeout);
    if (fd.ok()) return fd;
    last = absl::UnavailableError(absl::StrCat(AddressText(a), ": ", fd.status().message()));
  }
  return last;
}

std::string OpenSslError() {
  unsigned long e = ERR_get_error();
  if (e == 0) return "handshake failed";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  return buf;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> Resolve(const std::string& host) {
  absl::StatusOr<AddrInfo> ai = Lookup(host, 443);
  if (!ai.ok()) return ai.status();
  std::vector<std::string> out;
  for (const addrinfo* a = ai->get(); a != nullptr; a = a->ai_next) {
    std::string text = AddressText(a);
    if (std::find(out.begin(), out.end(), text) == out.end()) out.push_back(text);
  }
  return out;
}

absl::Status TcpConnect(const std::string& host, int port, absl::Duration timeout) {
  return ConnectAny(host, port, timeout).status();
}

absl::StatusOr<std::string> ServerThumbprint(const std::string& host, int port,
                                             absl::Duration timeout) {
  absl::StatusOr<std::unique_ptr<Fd>> fd = ConnectAny(host, port, timeout);
  if (!fd.ok()) return fd.status();
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_client_method()),
                                                        SSL_CTX_free);
  std::unique_ptr<SSL, decltype(&SSL_free)> ssl(SSL_new(ctx.get()), SSL_free);
  SSL_set_verify(ssl.get(), SSL_VERIFY_NONE, nullptr);
  SSL_set_tlsext_host_name(ssl.get(), host.c_str());
  SSL_set_fd(ssl.get(), (*fd)->get());
  if (SSL_connect(ssl.get()) != 1) {
    return absl::UnavailableError(absl::StrCat("TLS handshake: ", OpenSslError()));
  }
  std::unique_ptr<X509, decltype(&X509_free)> cert(SSL_get1_peer_certificate(ssl.get()), X509_free);
  if (!cert) return absl::UnavailableError("the server presented no certificate");
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  X509_digest(cert.get(), EVP_sha1(), md, &n);
  std::vector<std::string> hex;
  for (unsigned int i = 0; i < n; ++i)
    hex.push_back(absl::StrCat(absl::Hex(md[i], absl::kZeroPad2)));
  SSL_shutdown(ssl.get());
  return absl::AsciiStrToUpper(absl::StrJoin(hex, ":"));
}

}  // namespace ccm::diagnose
