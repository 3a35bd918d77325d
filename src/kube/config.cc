#include "kube/config.h"

#include <errno.h>  // program_invocation_short_name

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "yaml-cpp/yaml.h"

#ifndef CCM_VERSION
#define CCM_VERSION "0.0.0"
#endif

namespace ccm::kube {
namespace {

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    return absl::NotFoundError(absl::StrCat("file ", path, ": ", std::strerror(errno)));
  }
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string Resolve(absl::string_view base_dir, const std::string& p) {
  if (p.empty() || p[0] == '/' || base_dir.empty()) return p;
  return (std::filesystem::path(std::string(base_dir)) / p).lexically_normal().string();
}

// Looks up the named entry of a kubeconfig list ("clusters", "users", "contexts") and returns
// its inner map (under `inner`).
absl::StatusOr<YAML::Node> FindNamed(const YAML::Node& root, const std::string& list,
                                     const std::string& inner, const std::string& name,
                                     const std::string& who) {
  YAML::Node l = root[list];
  if (l && l.IsSequence()) {
    for (const auto& e : l) {
      if (e.IsMap() && e["name"] && e["name"].as<std::string>() == name) {
        YAML::Node in = e[inner];
        if (!in || !in.IsMap()) {
          return absl::InvalidArgumentError(
              absl::StrCat(list, "[", name, "].", inner, ": missing"));
        }
        return in;
      }
    }
  }
  return absl::NotFoundError(absl::StrCat(who, ": no entry named \"", name, "\" in ", list));
}

std::string Str(const YAML::Node& m, const char* key) {
  YAML::Node n = m[key];
  return n && n.IsScalar() ? n.as<std::string>() : std::string();
}

absl::StatusOr<std::string> DecodeData(const std::string& b64, const std::string& field) {
  std::string out;
  if (!absl::Base64Unescape(b64, &out)) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": invalid base64"));
  }
  return out;
}

absl::StatusOr<Config> ParseInner(const YAML::Node& root, absl::string_view base_dir,
                                  absl::string_view context_override) {
  if (!root.IsMap()) return absl::InvalidArgumentError("not a YAML map");
  Config cfg;
  std::string ctx_name =
      context_override.empty() ? Str(root, "current-context") : std::string(context_override);
  if (ctx_name.empty()) {
    return absl::InvalidArgumentError("current-context: not set and no context given");
  }
  auto ctx = FindNamed(root, "contexts", "context", ctx_name,
                       context_override.empty() ? "current-context" : "context");
  if (!ctx.ok()) return ctx.status();
  std::string cluster_name = Str(*ctx, "cluster");
  std::string user_name = Str(*ctx, "user");
  if (std::string ns = Str(*ctx, "namespace"); !ns.empty()) cfg.default_namespace = ns;
  if (cluster_name.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("contexts[", ctx_name, "].cluster: missing"));
  }
  auto cluster = FindNamed(root, "clusters", "cluster", cluster_name,
                           absl::StrCat("contexts[", ctx_name, "].cluster"));
  if (!cluster.ok()) return cluster.status();
  std::string cp = absl::StrCat("clusters[", cluster_name, "].");
  cfg.server = Str(*cluster, "server");
  if (cfg.server.empty()) return absl::InvalidArgumentError(cp + "server: missing");
  while (absl::EndsWith(cfg.server, "/")) cfg.server.pop_back();
  if (std::string ca = Str(*cluster, "certificate-authority-data"); !ca.empty()) {
    auto pem = DecodeData(ca, cp + "certificate-authority-data");
    if (!pem.ok()) return pem.status();
    cfg.tls.ca_pem = *pem;
  } else if (std::string caf = Str(*cluster, "certificate-authority"); !caf.empty()) {
    cfg.tls.ca_file = Resolve(base_dir, caf);
    if (!std::filesystem::exists(cfg.tls.ca_file)) {
      return absl::NotFoundError(
          absl::StrCat(cp, "certificate-authority: file ", cfg.tls.ca_file, " does not exist"));
    }
  }
  std::string insecure = absl::AsciiStrToLower(Str(*cluster, "insecure-skip-tls-verify"));
  cfg.tls.insecure = insecure == "true";
  cfg.tls_server_name = Str(*cluster, "tls-server-name");

  if (!user_name.empty()) {
    auto user =
        FindNamed(root, "users", "user", user_name, absl::StrCat("contexts[", ctx_name, "].user"));
    if (!user.ok()) return user.status();
    std::string up = absl::StrCat("users[", user_name, "].");
    cfg.bearer_token = Secret(Str(*user, "token"));
    if (std::string tf = Str(*user, "tokenFile"); !tf.empty()) {
      cfg.token_file = Resolve(base_dir, tf);
      auto t = ReadFile(cfg.token_file);
      if (!t.ok())
        return absl::NotFoundError(absl::StrCat(up, "tokenFile: ", t.status().message()));
      cfg.bearer_token = Secret(std::string(absl::StripTrailingAsciiWhitespace(*t)));
    }
    if (std::string d = Str(*user, "client-certificate-data"); !d.empty()) {
      auto pem = DecodeData(d, up + "client-certificate-data");
      if (!pem.ok()) return pem.status();
      cfg.tls.client_cert_pem = *pem;
    } else if (std::string f = Str(*user, "client-certificate"); !f.empty()) {
      cfg.tls.client_cert_file = Resolve(base_dir, f);
      if (!std::filesystem::exists(cfg.tls.client_cert_file)) {
        return absl::NotFoundError(absl::StrCat(up, "client-certificate: file ",
                                                cfg.tls.client_cert_file, " does not exist"));
      }
    }
    if (std::string d = Str(*user, "client-key-data"); !d.empty()) {
      auto pem = DecodeData(d, up + "client-key-data");
      if (!pem.ok()) return pem.status();
      cfg.tls.client_key_pem = *pem;
    } else if (std::string f = Str(*user, "client-key"); !f.empty()) {
      cfg.tls.client_key_file = Resolve(base_dir, f);
      if (!std::filesystem::exists(cfg.tls.client_key_file)) {
        return absl::NotFoundError(
            absl::StrCat(up, "client-key: file ", cfg.tls.client_key_file, " does not exist"));
      }
    }
    bool has_cert = !cfg.tls.client_cert_pem.empty() || !cfg.tls.client_cert_file.empty();
    bool has_key = !cfg.tls.client_key_pem.empty() || !cfg.tls.client_key_file.empty();
    if (has_cert != has_key) {
      return absl::InvalidArgumentError(
          absl::StrCat(up, has_cert ? "client-key" : "client-certificate",
                       ": missing (a client certificate needs both certificate and key)"));
    }
    cfg.username = Secret(Str(*user, "username"));
    cfg.password = Secret(Str(*user, "password"));
  }
  return cfg;
}

}  // namespace

std::string DefaultUserAgent() {
  // As client-go's: the program's file name, its version and platform. The API server names the
  // field manager of our writes after it (vsphere-cloud-controller-manager, vsphere-csi-driver).
  return absl::StrCat(program_invocation_short_name, "/", CCM_VERSION, " (linux/amd64)");
}

absl::StatusOr<Config> ParseKubeconfig(absl::string_view text, absl::string_view source,
                                       absl::string_view base_dir, absl::string_view context) {
  absl::StatusOr<Config> cfg;
  try {
    YAML::Node root = YAML::Load(std::string(text));
    cfg = ParseInner(root, base_dir, context);
  } catch (const YAML::Exception& e) {
    cfg = absl::InvalidArgumentError(absl::StrCat("malformed YAML: ", e.what()));
  }
  if (!cfg.ok()) {
    return absl::Status(cfg.status().code(),
                        absl::StrCat("kubeconfig ", source, ": ", cfg.status().message()));
  }
  return cfg;
}

absl::StatusOr<Config> LoadKubeconfig(const std::string& path, absl::string_view context) {
  auto text = ReadFile(path);
  if (!text.ok()) {
    return absl::Status(text.status().code(),
                        absl::StrCat("kubeconfig: ", text.status().message()));
  }
  std::string dir = std::filesystem::absolute(path).parent_path().string();
  return ParseKubeconfig(*text, path, dir, context);
}

EnvLookup ProcessEnv() {
  return [](absl::string_view name) -> std::optional<std::string> {
    const char* v = std::getenv(std::string(name).c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
}

absl::StatusOr<Config> InClusterConfig(const EnvLookup& env, const InClusterPaths& paths) {
  auto host = env("KUBERNETES_SERVICE_HOST");
  auto port = env("KUBERNETES_SERVICE_PORT");
  if (!host || host->empty() || !port || port->empty()) {
    return absl::FailedPreconditionError(
        "in-cluster config: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set "
        "(not running in a Pod?)");
  }
  Config cfg;
  // IPv6 service hosts need brackets in a URL.
  std::string h = absl::StrContains(*host, ':') ? absl::StrCat("[", *host, "]") : *host;
  cfg.server = absl::StrCat("https://", h, ":", *port);
  auto token = ReadFile(paths.token_file);
  if (!token.ok()) {
    return absl::Status(token.status().code(),
                        absl::StrCat("in-cluster config: token: ", token.status().message()));
  }
  cfg.bearer_token = Secret(std::string(absl::StripTrailingAsciiWhitespace(*token)));
  cfg.token_file = paths.token_file;
  if (!std::filesystem::exists(paths.ca_file)) {
    return absl::NotFoundError(
        absl::StrCat("in-cluster config: ca.crt: file ", paths.ca_file, " does not exist"));
  }
  cfg.tls.ca_file = paths.ca_file;
  if (auto ns = ReadFile(paths.namespace_file); ns.ok()) {
    std::string n(absl::StripAsciiWhitespace(*ns));
    if (!n.empty()) cfg.default_namespace = n;
  }
  return cfg;
}

absl::StatusOr<Config> BuildConfig(const std::string& master, const std::string& kubeconfig,
                                   const EnvLookup& env, const InClusterPaths& paths) {
  absl::StatusOr<Config> cfg;
  if (!kubeconfig.empty()) {
    cfg = LoadKubeconfig(kubeconfig);
  } else {
    cfg = InClusterConfig(env, paths);
    if (!cfg.ok() && !master.empty()) cfg = Config();  // --master alone, like client-go
  }
  if (!cfg.ok()) return cfg.status();
  if (!master.empty()) {
    cfg->server = master;
    while (absl::EndsWith(cfg->server, "/")) cfg->server.pop_back();
  }
  return cfg;
}

}  // namespace ccm::kube
