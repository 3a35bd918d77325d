#include "integration/controllers/controllers_test_env.h"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "kube/config.h"
#include "kube/resource.h"

namespace ccm::controllers::testing {

Env::Env() {
  char tmpl[] = "/tmp/ccm-controllers-XXXXXX";
  dir_ = mkdtemp(tmpl);
}

Env::~Env() {
  if (recorder) recorder->Shutdown();
  emulator.Stop();  // ends the informer's watch at once
  if (factory) factory->Stop();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

absl::Status Env::Init() {
  absl::StatusOr<std::string> url = emulator.Start();
  if (!url.ok()) return url.status();
  std::string kubeconfig = dir_ + "/kubeconfig";
  if (absl::Status s = emulator.WriteKubeconfig(kubeconfig); !s.ok()) return s;
  absl::StatusOr<kube::Config> config = kube::LoadKubeconfig(kubeconfig);
  if (!config.ok()) return config.status();
  config->qps = 1000;
  config->burst = 1000;
  absl::StatusOr<std::unique_ptr<kube::RestClient>> rc = kube::RestClient::New(*config);
  if (!rc.ok()) return rc.status();
  rest = *std::move(rc);
  client = std::make_unique<RecordingClient>(*rest);
  factory = std::make_unique<kube::SharedInformerFactory>(*client);
  nodes = &factory->For(kube::Nodes());
  factory->Start();
  if (!factory->WaitForSync(absl::Seconds(20))) return absl::DeadlineExceededError("sync");
  sink = std::make_unique<kube::KubeEventSink>(*client);
  recorder = std::make_unique<kube::EventRecorder>(*sink);
  return absl::OkStatus();
}

kube::Json Env::CreateKubeletNode(const std::string& name, bool ready,
                                  const std::string& provider_id) {
  kube::Json node = {
      {"apiVersion", "v1"},
      {"kind", "Node"},
      {"metadata", {{"name", name}, {"labels", {{"kubernetes.io/hostname", name}}}}},
      {"spec",
       {{"taints", kube::Json::array({{{"key", "node.cloudprovider.kubernetes.io/uninitialized"},
                                       {"value", "true"},
                                       {"effect", "NoSchedule"}}})}}},
      {"status",
       {{"nodeInfo", {{"systemUUID", "56492e42-22ad-3911-6d72-59cc8f26bc90"}}},
        {"conditions", kube::Json::array()}}},
  };
  if (!provider_id.empty()) node["spec"]["providerID"] = provider_id;
  SetReady(node, ready);
  absl::StatusOr<kube::Json> created = emulator.Create("nodes", node);
  return created.ok() ? *created : kube::Json();
}

void Env::SetReady(kube::Json& node, bool ready) {
  kube::Json cond = {{"type", "Ready"}, {"status", ready ? "True" : "False"}};
  kube::Json& conds = node["status"]["conditions"];
  for (auto& c : conds) {
    if (c.value("type", "") == "Ready") {
      c = cond;
      return;
    }
  }
  conds.push_back(cond);
}

kube::Json Env::GetNode(const std::string& name) {
  absl::StatusOr<kube::Json> n = emulator.Get("nodes", "", name);
  return n.ok() ? *n : kube::Json();
}

void Env::EditNode(const std::string& name, const std::function<void(kube::Json&)>& edit) {
  kube::Json n = GetNode(name);
  edit(n);
  (void)emulator.Put("nodes", n);
}

std::vector<kube::EventInfo> Env::EventsFor(const std::string& node_name) {
  recorder->Flush();
  std::vector<kube::EventInfo> out;
  for (const kube::Json& e : emulator.List("events")) {
    kube::EventInfo info = kube::GetEventInfo(e);
    if (info.involved_name == node_name) out.push_back(info);
  }
  return out;
}

bool Env::StoreSees(const std::string& name, const std::function<bool(const kube::Json&)>& pred) {
  return Eventually([&] {
    kube::ObjectPtr n = nodes->Get(name);
    return n && pred(*n);
  });
}

cloud::InstanceMetadata VmMetadata(const std::string& name, const std::string& uuid,
                                   const std::string& ip) {
  cloud::InstanceMetadata md;
  md.provider_id = "vsphere://" + uuid;
  md.instance_type = "vsphere-vm.cpu-2.mem-4gb.os-ubuntu";
  md.zone = "zone-a";
  md.region = "region-1";
  md.node_addresses = {{cloud::NodeAddressType::kHostname, name},
                       {cloud::NodeAddressType::kInternalIP, ip},
                       {cloud::NodeAddressType::kExternalIP, ip}};
  return md;
}

}  // namespace ccm::controllers::testing
