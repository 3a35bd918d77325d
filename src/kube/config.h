#pragma once
// Where and how to reach the API server: from a kubeconfig file (like `kubectl --kubeconfig`) or
// from inside a Pod (service-account token, CA and namespace files). Mirrors client-go's
// clientcmd.BuildConfigFromFlags(master, kubeconfig): no kubeconfig -> in-cluster config.
//
// Errors name the file and the field, e.g.
//   "kubeconfig /etc/k.conf: users[admin].client-key: file /etc/key.pem: No such file or directory"

#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/http_client.h"
#include "common/secret.h"

namespace ccm::kube {

struct Config {
  std::string server;           // "https://10.0.0.1:6443", no trailing '/'
  TlsOptions tls;               // CA, client certificate, insecure
  std::string tls_server_name;  // name checked in the server certificate, if not the host's
  Secret bearer_token;
  // When set, the bearer token is read from this file and re-read whenever the file changes
  // (projected service-account tokens rotate); `bearer_token` is then only the first value.
  std::string token_file;
  Secret username;  // basic auth
  Secret password;
  std::string default_namespace = "default";  // the context's namespace / the Pod's namespace
  // Client behaviour (flags --kube-api-qps, --kube-api-burst).
  double qps = 20;
  int burst = 30;
  absl::Duration timeout = absl::Seconds(30);  // per non-watch request
  std::string user_agent;                      // empty: DefaultUserAgent()
};

// "<program>/<version> (linux/amd64)": "vsphere-cloud-controller-manager/...",
// "vsphere-csi-driver/...".
std::string DefaultUserAgent();

// Parses a kubeconfig. `context` empty = current-context. Relative file paths are resolved
// against the kubeconfig's folder.
absl::StatusOr<Config> LoadKubeconfig(const std::string& path, absl::string_view context = "");
// Same for kubeconfig text; `source` names it in errors and `base_dir` resolves relative paths.
absl::StatusOr<Config> ParseKubeconfig(absl::string_view text, absl::string_view source,
                                       absl::string_view base_dir, absl::string_view context = "");

// Reads an environment variable; returns nullopt when unset. Injected so tests set their own.
using EnvLookup = std::function<std::optional<std::string>(absl::string_view)>;
EnvLookup ProcessEnv();

struct InClusterPaths {
  std::string token_file = "/var/run/secrets/kubernetes.io/serviceaccount/token";
  std::string ca_file = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt";
  std::string namespace_file = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";
};

// In-cluster config from KUBERNETES_SERVICE_HOST / KUBERNETES_SERVICE_PORT and the
// service-account files. The token is re-read when the file changes (see Config::token_file).
absl::StatusOr<Config> InClusterConfig(const EnvLookup& env,
                                       const InClusterPaths& paths = InClusterPaths());

// clientcmd.BuildConfigFromFlags: `kubeconfig` empty -> in-cluster; `master` non-empty
// overrides the server (with neither a kubeconfig nor in-cluster env, `master` alone is used).
absl::StatusOr<Config> BuildConfig(const std::string& master, const std::string& kubeconfig,
                                   const EnvLookup& env = ProcessEnv(),
                                   const InClusterPaths& paths = InClusterPaths());

}  // namespace ccm::kube
