#pragma once
// vCenter credentials from the sources vsphere.conf names (inline user/password, the global or a
// per-vCenter Kubernetes Secret, secrets-directory), served to the vSphere layer through
// ccm::vsphere::CredentialSource.
//
// Better than the reference: credentials are read before the first login (Get() is Unavailable
// until they are known; never empty credentials), and a changed Secret or file bumps
// generation() so sessions log in again at once. A deleted Secret keeps the last good
// credentials (with a warning). No value is ever logged or put in an error.
//
// The data formats are parsed by cloud/config/credential_data.h (pure); this unit adds the
// watching (Secret subscriptions, an inotify thread for secrets-directory).

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "cloud/config/config.h"
#include "cloud/config/credential_data.h"
#include "vsphere/credential_source.h"

namespace ccm::cloud {

// Kubernetes Secrets as the credential code needs them; the app implements it on the Secret
// informer. Callbacks may run on any thread; data == nullopt means the Secret was deleted.
class SecretWatcher {
 public:
  using Callback = std::function<void(const std::string& ns, const std::string& name,
                                      const std::optional<SecretData>& data)>;
  virtual ~SecretWatcher() = default;
  // Current data; NotFound when the Secret does not exist.
  virtual absl::StatusOr<SecretData> Get(const std::string& ns, const std::string& name) const = 0;
  // Returns a handle for Unsubscribe.
  virtual int Subscribe(Callback cb) = 0;
  virtual void Unsubscribe(int handle) = 0;
};

class CredentialStore final : public vsphere::CredentialSource {
 public:
  // `watcher` may be null when no vCenter uses a Secret; it must outlive the store.
  CredentialStore(const Config& config, SecretWatcher* watcher);
  ~CredentialStore() override;

  // Reads every source once (Secrets through the watcher, the directory from disk), subscribes
  // to changes and starts the directory watcher (inotify). Sources that cannot be read yet are
  // logged; their vCenters stay Unavailable until the data arrives.
  absl::Status Start();
  void Stop();

  absl::StatusOr<vsphere::Credentials> Get(absl::string_view server) const override;
  uint64_t generation() const override;
  int Subscribe(std::function<void()> on_change) override;
  void Unsubscribe(int handle) override;

  // Takes the inline passwords of `config` (a re-read config file) for the vCenters whose
  // credentials are inline here; a change bumps generation() so sessions log in again with it.
  // Returns the labels of the vCenters whose credentials changed. Other sources are untouched.
  std::vector<std::string> SetInline(const Config& config);

  // Re-reads secrets-directory now (the inotify thread calls this on changes).
  void ReloadDirectory();
  // Blocks until generation() >= min or the timeout passes; returns whether it got there.
  bool WaitForGeneration(uint64_t min, absl::Duration timeout) const;

 private:
  struct Route {  // where one vCenter's credentials come from
    CredentialSourceKind kind;
    std::string source;  // "ns/name" or the directory; empty for inline
  };
  void OnSecret(const std::string& ns, const std::string& name,
                const std::optional<SecretData>& data);
  void Update(const std::string& source, absl::StatusOr<CredentialMap> parsed);
  void WatchDirectory();

  std::map<std::string, Route> routes_;  // server -> route
  std::map<std::string, vsphere::Credentials> inline_ ABSL_GUARDED_BY(mu_);
  std::string directory_;
  SecretWatcher* watcher_;
  int subscription_ = 0;

  absl::Mutex notify_mu_ ABSL_ACQUIRED_BEFORE(mu_);  // held while subscribers are called
  mutable absl::Mutex mu_;
  std::map<std::string, CredentialMap> known_ ABSL_GUARDED_BY(mu_);  // source -> last good data
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<int, std::function<void()>> subscribers_ ABSL_GUARDED_BY(mu_);
  int next_subscriber_ ABSL_GUARDED_BY(mu_) = 1;

  int inotify_fd_ = -1;
  int stop_fd_ = -1;  // eventfd that wakes the watcher thread to stop
  std::thread dir_thread_;
};

}  // namespace ccm::cloud
