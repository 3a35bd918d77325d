#include "cloud/credentials/credential_store.h"

#include <dirent.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/logging.h"

namespace ccm::cloud {

CredentialStore::CredentialStore(const Config& config, SecretWatcher* watcher) : watcher_(watcher) {
  for (const VirtualCenterConfig& vc : config.vcenters) {
    Route r{vc.credential_source, ""};
    switch (vc.credential_source) {
      case CredentialSourceKind::kInline: {
        absl::MutexLock l(&mu_);
        inline_[vc.server] = vsphere::Credentials{vc.user, vc.password};
        break;
      }
      case CredentialSourceKind::kGlobalSecret:
      case CredentialSourceKind::kVCenterSecret:
        r.source = absl::StrCat(vc.secret_namespace, "/", vc.secret_name);
        break;
      case CredentialSourceKind::kSecretsDirectory:
        r.source = vc.secrets_directory;
        directory_ = vc.secrets_directory;
        break;
    }
    routes_[vc.server] = r;
  }
}

CredentialStore::~CredentialStore() { Stop(); }

absl::Status CredentialStore::Start() {
  std::set<std::string> secrets;
  for (const auto& [server, r] : routes_) {
    if (r.kind == CredentialSourceKind::kGlobalSecret ||
        r.kind == CredentialSourceKind::kVCenterSecret) {
      secrets.insert(r.source);
    }
  }
  if (!secrets.empty()) {
    if (watcher_ == nullptr) {
      return absl::FailedPreconditionError(
          "credentials come from a Secret but no Secret watcher "
          "was given");
    }
    subscription_ = watcher_->Subscribe(
        [this](const std::string& ns, const std::string& name,
               const std::optional<SecretData>& data) { OnSecret(ns, name, data); });
    for (const std::string& source : secrets) {
      size_t slash = source.find('/');
      std::string ns = source.substr(0, slash), name = source.substr(slash + 1);
      absl::StatusOr<SecretData> data = watcher_->Get(ns, name);
      if (!data.ok()) {
        LOG_WARN("vCenter credentials: Secret {} cannot be read yet: {}", source, data.status());
        continue;
      }
      OnSecret(ns, name, *data);
    }
  }
  if (!directory_.empty()) {
    inotify_fd_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    stop_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (inotify_fd_ < 0 || stop_fd_ < 0 ||
        inotify_add_watch(
            inotify_fd_, directory_.c_str(),
            IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ATTRIB) < 0) {
      LOG_WARN("vCenter credentials: cannot watch secrets-directory {}; changes need a restart",
               directory_);
    } else {
      dir_thread_ = std::thread([this] { WatchDirectory(); });
    }
    ReloadDirectory();
  }
  absl::MutexLock l(&mu_);
  ++generation_;  // inline credentials (and whatever was read) are generation 1
  return absl::OkStatus();
}

void CredentialStore::Stop() {
  if (subscription_ != 0 && watcher_ != nullptr) {
    watcher_->Unsubscribe(subscription_);
    subscription_ = 0;
  }
  if (dir_thread_.joinable()) {
    uint64_t one = 1;
    if (write(stop_fd_, &one, sizeof(one)) < 0) {
      LOG_WARN("vCenter credentials: cannot wake the directory watcher");
    }
    dir_thread_.join();
  }
  if (inotify_fd_ >= 0) close(inotify_fd_);
  if (stop_fd_ >= 0) close(stop_fd_);
  inotify_fd_ = stop_fd_ = -1;
}

void CredentialStore::WatchDirectory() {
  pollfd fds[2] = {{inotify_fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
  char buf[4096];
  while (true) {
    if (poll(fds, 2, -1) < 0) continue;
    if (fds[1].revents & POLLIN) return;
    if (fds[0].revents & POLLIN) {
      while (read(inotify_fd_, buf, sizeof(buf)) > 0) {
      }
      ReloadDirectory();
    }
  }
}

void CredentialStore::ReloadDirectory() {
  SecretData data;
  DIR* dir = opendir(directory_.c_str());
  if (dir == nullptr) {
    Update(directory_, absl::UnavailableError(
                           absl::StrCat("secrets-directory ", directory_, " cannot be opened")));
    return;
  }
  while (dirent* e = readdir(dir)) {
    std::string name = e->d_name;
    // Skip ".", ".." and the Kubernetes volume's "..data" / "..<timestamp>" entries.
    if (absl::StartsWith(name, "..") || name == ".") continue;
    std::string path = absl::StrCat(directory_, "/", name);
    struct stat st;
    if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    data[name] = ss.str();
  }
  closedir(dir);
  Update(directory_, ParseCredentialData(data, absl::StrCat("secrets-directory ", directory_)));
}

void CredentialStore::OnSecret(const std::string& ns, const std::string& name,
                               const std::optional<SecretData>& data) {
  std::string source = absl::StrCat(ns, "/", name);
  bool used = false;
  for (const auto& [server, r] : routes_) used = used || r.source == source;
  if (!used) return;
  if (!data) {
    absl::MutexLock l(&mu_);
    LOG_WARN(
        "vCenter credentials: Secret {} was deleted; keeping the last known credentials "
        "({} vCenter(s)) until it is back",
        source, known_.count(source) ? known_[source].size() : 0);
    return;
  }
  Update(source, ParseCredentialData(*data, absl::StrCat("Secret ", source)));
}

void CredentialStore::Update(const std::string& source, absl::StatusOr<CredentialMap> parsed) {
  absl::MutexLock n(&notify_mu_);  // Unsubscribe() waits for these calls
  std::vector<std::function<void()>> notify;
  {
    absl::MutexLock l(&mu_);
    if (!parsed.ok()) {
      LOG_WARN("vCenter credentials: {}; keeping the last good credentials",
               parsed.status().message());
      return;
    }
    auto it = known_.find(source);
    if (it != known_.end() && it->second == *parsed) return;
    known_[source] = *std::move(parsed);
    ++generation_;
    LOG_INFO("vCenter credentials from {} updated (generation {})", source, generation_);
    for (const auto& [handle, fn] : subscribers_) notify.push_back(fn);
  }
  for (const auto& fn : notify) fn();  // outside the lock: they may call Get()
}

std::vector<std::string> CredentialStore::SetInline(const Config& config) {
  absl::MutexLock n(&notify_mu_);
  std::vector<std::string> changed;
  std::vector<std::function<void()>> notify;
  {
    absl::MutexLock l(&mu_);
    for (const VirtualCenterConfig& vc : config.vcenters) {
      auto r = routes_.find(vc.server);
      if (r == routes_.end() || r->second.kind != CredentialSourceKind::kInline ||
          vc.credential_source != CredentialSourceKind::kInline) {
        continue;
      }
      vsphere::Credentials next{vc.user, vc.password};
      if (inline_[vc.server] == next) continue;
      inline_[vc.server] = std::move(next);
      changed.push_back(vc.label);
    }
    if (changed.empty()) return changed;
    ++generation_;
    LOG_INFO("vCenter credentials in the config file updated for {} (generation {})",
             absl::StrJoin(changed, ", "), generation_);
    for (const auto& [handle, fn] : subscribers_) notify.push_back(fn);
  }
  for (const auto& fn : notify) fn();
  return changed;
}

int CredentialStore::Subscribe(std::function<void()> on_change) {
  absl::MutexLock l(&mu_);
  const int handle = next_subscriber_++;
  subscribers_[handle] = std::move(on_change);
  return handle;
}

void CredentialStore::Unsubscribe(int handle) {
  {
    absl::MutexLock l(&mu_);
    subscribers_.erase(handle);
  }
  // A call already under way ends before this returns: the subscriber may go away after it.
  absl::MutexLock n(&notify_mu_);
}

absl::StatusOr<vsphere::Credentials> CredentialStore::Get(absl::string_view server) const {
  auto r = routes_.find(std::string(server));
  if (r == routes_.end()) {
    return absl::NotFoundError(absl::StrCat("no vCenter \"", server, "\" in the config"));
  }
  absl::MutexLock l(&mu_);
  if (r->second.kind == CredentialSourceKind::kInline) return inline_.at(r->first);
  auto src = known_.find(r->second.source);
  if (src != known_.end()) {
    auto c = src->second.find(r->first);
    if (c != src->second.end()) return c->second;
  }
  return absl::UnavailableError(absl::StrCat("no credentials for vCenter \"", server, "\" in ",
                                             CredentialSourceKindName(r->second.kind), " (",
                                             r->second.source, ") yet"));
}

uint64_t CredentialStore::generation() const {
  absl::MutexLock l(&mu_);
  return generation_;
}

bool CredentialStore::WaitForGeneration(uint64_t min, absl::Duration timeout) const {
  absl::MutexLock l(&mu_);
  auto reached = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return generation_ >= min; };
  return mu_.AwaitWithTimeout(absl::Condition(&reached), timeout);
}

}  // namespace ccm::cloud
