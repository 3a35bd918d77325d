#include "app/csi/webhook.h"

#include <sys/stat.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "app/csi/client_rate.h"
#include "app/shared/self_signed.h"
#include "common/logging.h"
#include "csi/webhook/admission.h"
#include "csi/webhook/webhook_config.h"
#include "httplib.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/errors.h"
#include "kube/resource.h"

namespace ccm::app {
namespace {

const kube::Resource& VolumeSnapshots() {
  static const kube::Resource* const r = new kube::Resource{
      "snapshot.storage.k8s.io", "v1", "volumesnapshots", "VolumeSnapshot", true};
  return *r;
}

csi::AdmissionLookups Lookups(kube::Client& client) {
  csi::AdmissionLookups l;
  l.reclaim_policy = [&client](const std::string& pv) -> absl::StatusOr<std::string> {
    absl::StatusOr<kube::Json> obj = client.Get(kube::PersistentVolumes(), "", pv);
    if (!obj.ok()) return obj.status();
    return obj->value("/spec/persistentVolumeReclaimPolicy"_json_pointer, std::string());
  };
  l.snapshots_of = [&client](const std::string& ns,
                             const std::string& pvc) -> absl::StatusOr<std::vector<std::string>> {
    absl::StatusOr<kube::ListResult> list = client.List(VolumeSnapshots(), ns, {});
    if (!list.ok()) return list.status();
    std::vector<std::string> out;
    for (const kube::Json& s : list->items) {
      if (s.value("/spec/source/persistentVolumeClaimName"_json_pointer, std::string()) == pvc) {
        out.push_back(s.value("/metadata/name"_json_pointer, std::string()));
      }
    }
    return out;
  };
  l.namespace_terminating = [&client](const std::string& ns) -> absl::StatusOr<bool> {
    absl::StatusOr<kube::Json> obj = client.Get(kube::Namespaces(), "", ns);
    if (!obj.ok()) return obj.status();
    return obj->contains("/metadata/deletionTimestamp"_json_pointer);
  };
  return l;
}

absl::StatusOr<csi::WebhookConfig> ReadWebhookConfig(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream text;
  text << in.rdbuf();
  return csi::ParseWebhookConfig(text.str(), path);
}

// Modification times of the certificate and key: a change means a rotation.
std::string Stamp(const csi::WebhookConfig& c) {
  std::string out;
  for (const std::string& f : {c.cert_file, c.key_file}) {
    struct stat st {};
    if (stat(f.c_str(), &st) == 0) {
      absl::StrAppend(&out, st.st_mtim.tv_sec, ".", st.st_mtim.tv_nsec, ":", st.st_size, ";");
    }
  }
  return out;
}

// One listener with the certificate as it is now.
class Listener {
 public:
  absl::Status Start(const csi::WebhookConfig& c, kube::Client& client) {
    absl::StatusOr<KeyPair> kp = LoadKeyPair(c.cert_file, c.key_file);
    if (!kp.ok()) return kp.status();
    keys_ = std::make_unique<KeyPair>(*std::move(kp));
    server_ = std::make_unique<httplib::SSLServer>(keys_->cert.get(), keys_->key.get());
    server_->new_task_queue = [] { return new httplib::ThreadPool(4); };
    server_->set_socket_options([](socket_t sock) {
      int yes = 1;
      setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    });
    const csi::AdmissionLookups lookups = Lookups(client);
    server_->Post("/validate", [lookups](const httplib::Request& req, httplib::Response& res) {
      csi::HttpAnswer a =
          csi::ReviewAdmission(req.get_header_value("Content-Type"), req.body, lookups);
      res.status = a.status;
      res.set_content(a.body, a.content_type);
    });
    server_->Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("ok", "text/plain");
    });
    if (!server_->bind_to_port("0.0.0.0", c.port)) {
      return absl::UnavailableError(absl::StrCat("webhook: cannot listen on port ", c.port));
    }
    thread_ = std::thread([this] { server_->listen_after_bind(); });
    while (!server_->is_running()) std::this_thread::yield();
    return absl::OkStatus();
  }
  ~Listener() {
    if (server_) server_->stop();
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::unique_ptr<KeyPair> keys_;
  std::unique_ptr<httplib::SSLServer> server_;
  std::thread thread_;
};

}  // namespace

int RunCsiWebhook(const CsiSyncerOptions& o, const std::map<std::string, std::string>& env,
                  absl::Notification& stop) {
  LOG_INFO("vsphere-csi-driver {} starting the validating admission webhook", CCM_VERSION);
  absl::StatusOr<csi::WebhookConfig> config = ReadWebhookConfig(o.webhook_config_path);
  if (!config.ok()) {
    LOG_ERROR("webhook config: {}", config.status().message());
    return 1;
  }
  absl::StatusOr<kube::Config> kc = kube::BuildConfig(o.master, o.kubeconfig);
  if (!kc.ok()) {
    LOG_ERROR("webhook: Kubernetes client: {}", kc.status().message());
    return 1;
  }
  ClientRate rate = InClusterClientRate(env);  // the reference's INCLUSTER_CLIENT_QPS / _BURST
  for (const std::string& w : rate.warnings) LOG_WARN("{}", w);
  LOG_INFO("{}", DescribeClientRate(rate));
  kc->qps = rate.qps;
  kc->burst = rate.burst;
  absl::StatusOr<std::unique_ptr<kube::RestClient>> client = kube::RestClient::New(*kc);
  if (!client.ok()) {
    LOG_ERROR("webhook: Kubernetes client: {}", client.status().message());
    return 1;
  }
  auto listener = std::make_unique<Listener>();
  if (absl::Status s = listener->Start(*config, **client); !s.ok()) {
    LOG_ERROR("webhook: {}", s.message());
    return 1;
  }
  LOG_INFO("webhook serving POST /validate on port {} ({})", config->port, config->cert_file);
  std::string stamp = Stamp(*config);
  while (!stop.WaitForNotificationWithTimeout(absl::Seconds(2))) {
    const std::string now = Stamp(*config);
    if (now == stamp) continue;
    listener.reset();  // the port is free again for the new listener
    auto next = std::make_unique<Listener>();
    if (absl::Status s = next->Start(*config, **client); !s.ok()) {
      LOG_ERROR("webhook: the rotated certificate cannot be served: {}", s.message());
      return 1;  // restarted by Kubernetes, with the files as they are then
    }
    listener = std::move(next);
    stamp = now;
    LOG_INFO("webhook: certificate {} reloaded", config->cert_file);
  }
  return 0;
}

}  // namespace ccm::app
