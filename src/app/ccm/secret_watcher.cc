#include "app/ccm/secret_watcher.h"

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "kube/objects.h"
#include "kube/resource.h"

namespace ccm::app {

KubeSecretWatcher::KubeSecretWatcher(kube::Client& client,
                                     const std::set<std::string>& namespaces) {
  for (const auto& ns : namespaces) {
    kube::InformerOptions o;
    o.ns = ns;
    auto inf = std::make_unique<kube::Informer>(client, kube::Secrets(), o);
    inf->AddEventHandler({
        .on_add = [this](const kube::Json& s) { Dispatch(s, false); },
        .on_update =
            [this](const kube::Json& old_s, const kube::Json& s) {
              if (old_s.value("metadata", kube::Json::object()).value("resourceVersion", "") !=
                  s.value("metadata", kube::Json::object()).value("resourceVersion", ""))
                Dispatch(s, false);
            },
        .on_delete = [this](const kube::Json& s) { Dispatch(s, true); },
    });
    informers_[ns] = std::move(inf);
  }
}

KubeSecretWatcher::~KubeSecretWatcher() { Stop(); }

void KubeSecretWatcher::Start() {
  for (auto& [ns, inf] : informers_) inf->Start();
}

bool KubeSecretWatcher::WaitForSync(absl::Duration timeout) {
  for (auto& [ns, inf] : informers_)
    if (!inf->WaitForSync(timeout)) return false;
  return true;
}

void KubeSecretWatcher::Stop() {
  for (auto& [ns, inf] : informers_) inf->Stop();
}

absl::StatusOr<cloud::SecretData> KubeSecretWatcher::Get(const std::string& ns,
                                                         const std::string& name) const {
  auto it = informers_.find(ns);
  if (it == informers_.end())
    return absl::InternalError(absl::StrCat("namespace ", ns, " is not watched for Secrets"));
  kube::ObjectPtr s = it->second->Get(absl::StrCat(ns, "/", name));
  if (!s) return absl::NotFoundError(absl::StrCat("Secret ", ns, "/", name, " not found"));
  return kube::SecretData(*s);
}

void KubeSecretWatcher::Dispatch(const kube::Json& secret, bool deleted) {
  const auto& md = secret.value("metadata", kube::Json::object());
  const std::string ns = md.value("namespace", ""), name = md.value("name", "");
  std::optional<cloud::SecretData> data;
  if (!deleted) {
    auto d = kube::SecretData(secret);
    if (!d.ok()) {
      LOG_WARN("Secret {}/{}: {}", ns, name, d.status().message());
      return;
    }
    data = *std::move(d);
  }
  std::map<int, Callback> cbs;
  {
    absl::MutexLock lock(&mu_);
    cbs = callbacks_;
  }
  for (auto& [id, cb] : cbs) cb(ns, name, data);
}

int KubeSecretWatcher::Subscribe(Callback cb) {
  absl::MutexLock lock(&mu_);
  callbacks_[next_] = std::move(cb);
  return next_++;
}

void KubeSecretWatcher::Unsubscribe(int handle) {
  absl::MutexLock lock(&mu_);
  callbacks_.erase(handle);
}

}  // namespace ccm::app
