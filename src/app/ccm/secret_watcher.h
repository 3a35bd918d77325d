#pragma once
// cloud::SecretWatcher on Kubernetes Secret informers (one per namespace the config names), so a
// changed credentials Secret reaches the vSphere sessions at once.

#include <map>
#include <memory>
#include <set>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "cloud/credentials/credential_store.h"
#include "kube/client.h"
#include "kube/informer.h"

namespace ccm::app {

class KubeSecretWatcher final : public cloud::SecretWatcher {
 public:
  KubeSecretWatcher(kube::Client& client, const std::set<std::string>& namespaces);
  ~KubeSecretWatcher() override;
  void Start();
  bool WaitForSync(absl::Duration timeout);
  void Stop();

  absl::StatusOr<cloud::SecretData> Get(const std::string& ns,
                                        const std::string& name) const override;
  int Subscribe(Callback cb) override;
  void Unsubscribe(int handle) override;

 private:
  void Dispatch(const kube::Json& secret, bool deleted);
  std::map<std::string, std::unique_ptr<kube::Informer>> informers_;  // by namespace
  mutable absl::Mutex mu_;
  std::map<int, Callback> callbacks_ ABSL_GUARDED_BY(mu_);
  int next_ ABSL_GUARDED_BY(mu_) = 1;
};

}  // namespace ccm::app
