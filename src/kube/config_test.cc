#include "kube/config.h"

#include <errno.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace ccm::kube {
namespace {

class TempDir {
 public:
  TempDir() {
    path_ = std::filesystem::temp_directory_path() /
            absl::StrCat("ccm-kube-config-", getpid(), "-", counter_++);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string Write(const std::string& name, const std::string& text) const {
    std::string p = (path_ / name).string();
    std::filesystem::create_directories(std::filesystem::path(p).parent_path());
    std::ofstream(p) << text;
    return p;
  }
  std::string path() const { return path_.string(); }

 private:
  static inline int counter_ = 0;
  std::filesystem::path path_;
};

std::string Kubeconfig(const std::string& cluster_extra, const std::string& user_extra,
                       const std::string& current = "ctx") {
  return absl::StrCat(R"(apiVersion: v1
kind: Config
current-context: )",
                      current, R"(
clusters:
- name: c1
  cluster:
    server: https://10.0.0.1:6443/
)",
                      cluster_extra, R"(
users:
- name: u1
  user:
)",
                      user_extra, R"(
contexts:
- name: ctx
  context: {cluster: c1, user: u1, namespace: kube-system}
- name: other
  context: {cluster: c1, user: u1}
)");
}

TEST(Kubeconfig, TokenAndCaData) {
  TempDir d;
  std::string ca = absl::Base64Escape("-----BEGIN CERTIFICATE-----\nabc\n");
  auto cfg = ParseKubeconfig(Kubeconfig(absl::StrCat("    certificate-authority-data: ", ca,
                                                     "\n    tls-server-name: api.local\n"),
                                        "    token: s3cret\n"),
                             "test", d.path());
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  EXPECT_EQ(cfg->server, "https://10.0.0.1:6443");
  EXPECT_EQ(cfg->tls.ca_pem, "-----BEGIN CERTIFICATE-----\nabc\n");
  EXPECT_EQ(cfg->tls_server_name, "api.local");
  EXPECT_EQ(cfg->bearer_token.reveal(), "s3cret");
  EXPECT_EQ(cfg->default_namespace, "kube-system");
  EXPECT_FALSE(cfg->tls.insecure);
}

TEST(Kubeconfig, RelativeFilesResolvedAgainstKubeconfigFolder) {
  TempDir d;
  d.Write("pki/ca.crt", "ca");
  d.Write("pki/client.crt", "cert");
  d.Write("pki/client.key", "key");
  d.Write("token", "tok-from-file\n");
  std::string path =
      d.Write("kube/../config",
              Kubeconfig("    certificate-authority: pki/ca.crt\n",
                         "    client-certificate: pki/client.crt\n    client-key: pki/client.key\n"
                         "    tokenFile: token\n"));
  auto cfg = LoadKubeconfig(path);
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  EXPECT_EQ(cfg->tls.ca_file, d.path() + "/pki/ca.crt");
  EXPECT_EQ(cfg->tls.client_cert_file, d.path() + "/pki/client.crt");
  EXPECT_EQ(cfg->tls.client_key_file, d.path() + "/pki/client.key");
  EXPECT_EQ(cfg->token_file, d.path() + "/token");
  EXPECT_EQ(cfg->bearer_token.reveal(), "tok-from-file");
}

TEST(Kubeconfig, ClientCertDataInsecureBasicAuthNamedContext) {
  TempDir d;
  auto cfg = ParseKubeconfig(
      Kubeconfig("    insecure-skip-tls-verify: true\n",
                 absl::StrCat("    client-certificate-data: ", absl::Base64Escape("CERT"),
                              "\n    client-key-data: ", absl::Base64Escape("KEY"),
                              "\n    username: admin\n    password: pw\n")),
      "test", d.path(), "other");
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  EXPECT_TRUE(cfg->tls.insecure);
  EXPECT_EQ(cfg->tls.client_cert_pem, "CERT");
  EXPECT_EQ(cfg->tls.client_key_pem, "KEY");
  EXPECT_EQ(cfg->username.reveal(), "admin");
  EXPECT_EQ(cfg->password.reveal(), "pw");
  EXPECT_EQ(cfg->default_namespace, "default");  // context "other" has none
}

TEST(Kubeconfig, ErrorsNameFileAndField) {
  TempDir d;
  struct Case {
    std::string text;
    std::string context;
    std::string want;
  };
  const Case cases[] = {
      {Kubeconfig("", "    client-key: missing.key\n    client-certificate-data: Q0VSVA==\n"), "",
       "users[u1].client-key: file"},
      {Kubeconfig("", "    client-certificate-data: Q0VSVA==\n"), "",
       "users[u1].client-key: missing"},
      {Kubeconfig("    certificate-authority-data: '***'\n", ""), "",
       "clusters[c1].certificate-authority-data: invalid base64"},
      {Kubeconfig("", "    token: x\n"), "nope", "context: no entry named \"nope\""},
      {Kubeconfig("", "    token: x\n", "\"\""), "", "current-context"},
      {"clusters: [\n", "", "malformed YAML"},
      {"clusters:\n- name: c1\n  cluster: {}\ncontexts:\n- name: a\n  context: {cluster: c1}\n"
       "current-context: a\n",
       "", "clusters[c1].server: missing"},
  };
  for (const Case& c : cases) {
    auto cfg = ParseKubeconfig(c.text, "/etc/kube.conf", d.path(), c.context);
    ASSERT_FALSE(cfg.ok()) << c.want;
    EXPECT_NE(cfg.status().message().find("kubeconfig /etc/kube.conf: "), absl::string_view::npos)
        << cfg.status();
    EXPECT_NE(cfg.status().message().find(c.want), absl::string_view::npos) << cfg.status();
  }
  auto missing = LoadKubeconfig(d.path() + "/none");
  EXPECT_NE(missing.status().message().find(d.path() + "/none"), absl::string_view::npos);
}

EnvLookup Env(std::map<std::string, std::string> m) {
  return [m](absl::string_view k) -> std::optional<std::string> {
    auto it = m.find(std::string(k));
    if (it == m.end()) return std::nullopt;
    return it->second;
  };
}

TEST(InCluster, ReadsServiceAccountFiles) {
  TempDir d;
  InClusterPaths p{d.Write("token", "tok1\n"), d.Write("ca.crt", "CA"),
                   d.Write("namespace", "kube-system")};
  auto cfg = InClusterConfig(
      Env({{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}, {"KUBERNETES_SERVICE_PORT", "443"}}), p);
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  EXPECT_EQ(cfg->server, "https://10.96.0.1:443");
  EXPECT_EQ(cfg->bearer_token.reveal(), "tok1");
  EXPECT_EQ(cfg->token_file, p.token_file);
  EXPECT_EQ(cfg->tls.ca_file, p.ca_file);
  EXPECT_EQ(cfg->default_namespace, "kube-system");

  auto v6 = InClusterConfig(
      Env({{"KUBERNETES_SERVICE_HOST", "fd00::1"}, {"KUBERNETES_SERVICE_PORT", "443"}}), p);
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->server, "https://[fd00::1]:443");
}

TEST(InCluster, Errors) {
  TempDir d;
  InClusterPaths p{d.path() + "/token", d.path() + "/ca.crt", d.path() + "/ns"};
  auto no_env = InClusterConfig(Env({}), p);
  EXPECT_NE(no_env.status().message().find("KUBERNETES_SERVICE_HOST"), absl::string_view::npos);
  auto no_token =
      InClusterConfig(Env({{"KUBERNETES_SERVICE_HOST", "h"}, {"KUBERNETES_SERVICE_PORT", "1"}}), p);
  EXPECT_NE(no_token.status().message().find(p.token_file), absl::string_view::npos);
}

TEST(BuildConfig, MasterOverridesAndStandsAlone) {
  TempDir d;
  std::string path = d.Write("config", Kubeconfig("", "    token: t\n"));
  auto cfg = BuildConfig("https://override:1234/", path, Env({}));
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  EXPECT_EQ(cfg->server, "https://override:1234");
  EXPECT_EQ(cfg->bearer_token.reveal(), "t");
  auto alone = BuildConfig("http://127.0.0.1:8080", "", Env({}), InClusterPaths{"/nonexistent"});
  ASSERT_TRUE(alone.ok()) << alone.status();
  EXPECT_EQ(alone->server, "http://127.0.0.1:8080");
  EXPECT_FALSE(BuildConfig("", "", Env({}), InClusterPaths{"/nonexistent"}).ok());
}

TEST(Config, UserAgent) {
  EXPECT_EQ(DefaultUserAgent().rfind(std::string(program_invocation_short_name) + "/", 0), 0u);
  EXPECT_NE(DefaultUserAgent().find("(linux/amd64)"), std::string::npos);
}

}  // namespace
}  // namespace ccm::kube
