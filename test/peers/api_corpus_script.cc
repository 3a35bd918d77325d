#include "peers/api_corpus_script.h"

#include <string>

namespace ccm::peers {
namespace {
using ::ccm::testing::CorpusCase;
using ::ccm::testing::CorpusStep;
using json = nlohmann::json;

constexpr char kCm[] = "/api/v1/namespaces/corpus/configmaps";
constexpr char kLeases[] = "/apis/coordination.k8s.io/v1/namespaces/corpus/leases";
constexpr char kMergePatch[] = "application/merge-patch+json";
constexpr char kStrategicPatch[] = "application/strategic-merge-patch+json";
constexpr char kJsonPatch[] = "application/json-patch+json";

CorpusStep Req(const std::string& method, const std::string& path, json body = nullptr,
               const std::string& content_type = "") {
  CorpusStep s;
  s.request.method = method;
  s.request.path = path;
  s.request.body = std::move(body);
  s.request.content_type = content_type;
  return s;
}

CorpusStep Watch(const std::string& path) {
  CorpusStep s = Req("GET", path);
  s.request.watch = true;
  return s;
}

json ConfigMap(const std::string& name, const json& data, const json& labels = json::object(),
               const std::string& rv = "") {
  json cm = {{"apiVersion", "v1"},
             {"kind", "ConfigMap"},
             {"metadata", {{"name", name}, {"namespace", "corpus"}, {"labels", labels}}},
             {"data", data}};
  if (!rv.empty()) cm["metadata"]["resourceVersion"] = rv;
  return cm;
}

CorpusCase OptimisticConcurrency() {
  const std::string one = std::string(kCm) + "/oc-cm";
  return {
      "configmap-optimistic-concurrency",
      "create, get, update at the read version, update at a stale one (409 Conflict and its "
      "Status), delete with a stale precondition (409), delete, get and update of what is gone "
      "(404)",
      {Req("POST", kCm, ConfigMap("oc-cm", {{"k", "v1"}}, {{"app", "corpus"}})), Req("GET", one),
       Req("PUT", one, ConfigMap("oc-cm", {{"k", "v2"}}, {{"app", "corpus"}}, "${rv:0}")),
       Req("PUT", one, ConfigMap("oc-cm", {{"k", "v3"}}, {{"app", "corpus"}}, "${rv:0}")),
       Req("DELETE", one,
           {{"apiVersion", "v1"},
            {"kind", "DeleteOptions"},
            {"preconditions", {{"resourceVersion", "${rv:0}"}}}}),
       Req("DELETE", one), Req("GET", one),
       Req("PUT", one, ConfigMap("oc-cm", {{"k", "v4"}}, {{"app", "corpus"}}, "${rv:2}"))}};
}

json Lease(const std::string& holder, const std::string& renew, const std::string& rv,
           int transitions) {
  json l = {{"apiVersion", "coordination.k8s.io/v1"},
            {"kind", "Lease"},
            {"metadata", {{"name", "le-lease"}, {"namespace", "corpus"}}},
            {"spec",
             {{"holderIdentity", holder},
              {"leaseDurationSeconds", 15},
              {"acquireTime", "2026-12-02T01:00:00.000000Z"},
              {"renewTime", renew},
              {"leaseTransitions", transitions}}}};
  if (!rv.empty()) l["metadata"]["resourceVersion"] = rv;
  return l;
}

CorpusCase LeaderElection() {
  const std::string one = std::string(kLeases) + "/le-lease";
  return {
      "lease-leader-election",
      "leader election's requests: get (404), create, create again (409 AlreadyExists), renew "
      "at the read version, take over at a stale version (409), get, release (holder emptied)",
      {Req("GET", one), Req("POST", kLeases, Lease("a", "2026-12-02T01:00:00.000000Z", "", 0)),
       Req("POST", kLeases, Lease("b", "2026-12-02T01:00:01.000000Z", "", 0)),
       Req("PUT", one, Lease("a", "2026-12-02T01:00:02.250000Z", "${rv:1}", 0)),
       Req("PUT", one, Lease("b", "2026-12-02T01:00:03.000000Z", "${rv:1}", 1)), Req("GET", one),
       Req("PUT", one, Lease("", "2026-12-02T01:00:04.000000Z", "${rv:3}", 0))}};
}

json Node(const std::string& rv = "") {
  json n = {
      {"apiVersion", "v1"},
      {"kind", "Node"},
      {"metadata", {{"name", "ns-node"}, {"labels", {{"kubernetes.io/hostname", "ns-node"}}}}},
      {"spec",
       {{"taints",
         {{{"key", "node.cloudprovider.kubernetes.io/uninitialized"},
           {"value", "true"},
           {"effect", "NoSchedule"}}}}}},
      {"status",
       {{"capacity", {{"cpu", "2"}, {"memory", "4025176Ki"}, {"pods", "110"}}},
        {"conditions",
         {{{"type", "Ready"},
           {"status", "True"},
           {"reason", "KubeletReady"},
           {"message", "kubelet is posting ready status"},
           {"lastHeartbeatTime", "2026-12-02T01:00:00Z"},
           {"lastTransitionTime", "2026-12-02T01:00:00Z"}}}},
        {"nodeInfo",
         {{"machineID", "m"},
          {"systemUUID", "a0a43742-e1c7-0a4b-8bd8-1c39b8a3f001"},
          {"bootID", "b"},
          {"kernelVersion", "6.1.0"},
          {"osImage", "Debian GNU/Linux 12 (bookworm)"},
          {"containerRuntimeVersion", "containerd://1.6.20"},
          {"kubeletVersion", "v1.24.0"},
          {"kubeProxyVersion", "v1.24.0"},
          {"operatingSystem", "linux"},
          {"architecture", "amd64"}}}}}};
  if (!rv.empty()) n["metadata"]["resourceVersion"] = rv;
  return n;
}

json Addresses(const std::string& ip) {
  return {{{"type", "Hostname"}, {"address", "ns-node"}},
          {{"type", "InternalIP"}, {"address", ip}}};
}

CorpusCase NodeStatusSubresource() {
  const std::string one = "/api/v1/nodes/ns-node";
  json put_main = Node("${rv:0}");
  put_main["spec"]["providerID"] = "vsphere://4237a4a0-c7e1-4b0a-8bd8-1c39b8a3f001";
  put_main["status"]["addresses"] = Addresses("10.0.0.9");
  json put_status = Node("${rv:1}");
  put_status["spec"]["unschedulable"] = true;
  put_status["status"]["addresses"] = Addresses("10.0.0.10");
  return {
      "node-status-subresource",
      "a Node as a kubelet registers it; a PUT of the Node keeps its status, a PUT of its status "
      "keeps its spec, a merge PATCH of the Node drops status, a strategic PATCH of the status "
      "merges addresses by type, JSON patches with a resourceVersion test (passing, then stale: "
      "its refusal), delete",
      {Req("POST", "/api/v1/nodes", Node()), Req("PUT", one, put_main),
       Req("PUT", one + "/status", put_status),
       Req("PATCH", one,
           {{"metadata", {{"labels", {{"node.kubernetes.io/instance-type", "vsphere-vm.cpu-2"}}}}},
            {"status", {{"addresses", Addresses("10.0.0.11")}}}},
           kMergePatch),
       Req("PATCH", one + "/status", {{"status", {{"addresses", Addresses("10.0.0.12")}}}},
           kStrategicPatch),
       Req("PATCH", one,
           {{{"op", "test"}, {"path", "/metadata/resourceVersion"}, {"value", "${rv:4}"}},
            {{"op", "remove"}, {"path", "/spec/taints/0"}}},
           kJsonPatch),
       Req("PATCH", one,
           {{{"op", "test"}, {"path", "/metadata/resourceVersion"}, {"value", "${rv:0}"}},
            {{"op", "add"}, {"path", "/spec/podCIDR"}, {"value", "10.244.1.0/24"}}},
           kJsonPatch),
       Req("GET", one), Req("DELETE", one)}};
}

CorpusCase Events() {
  // As the event recorder writes it: a cluster-scoped object's Event is in "default".
  const json core = {
      {"apiVersion", "v1"},
      {"kind", "Event"},
      {"metadata", {{"name", "ev-node.17c0a1b2c3d4e5f6"}, {"namespace", "default"}}},
      {"involvedObject",
       {{"kind", "Node"}, {"name", "ev-node"}, {"uid", "ev-node"}, {"apiVersion", "v1"}}},
      {"reason", "Synced"},
      {"message", "Node synced successfully"},
      {"type", "Normal"},
      {"source", {{"component", "cloud-node-controller"}}},
      {"count", 1},
      {"firstTimestamp", "2026-12-02T01:00:00Z"},
      {"lastTimestamp", "2026-12-02T01:00:00Z"},
      {"reportingComponent", "vsphere-cloud-controller-manager"}};
  const json v1 = {
      {"apiVersion", "events.k8s.io/v1"},
      {"kind", "Event"},
      {"metadata", {{"name", "ev-lease.17c0a1b2c3d4e5f7"}, {"namespace", "corpus"}}},
      {"eventTime", "2026-12-02T01:00:00.000000Z"},
      {"regarding",
       {{"kind", "Lease"}, {"namespace", "corpus"}, {"name", "cloud-controller-manager"}}},
      {"reason", "LeaderElection"},
      {"note", "node-1 became leader"},
      {"type", "Normal"},
      {"action", "Leader"},
      {"reportingController", "cloud-controller-manager"},
      {"reportingInstance", "node-1"}};
  return {"events",
          "a Node's Event posted in default, then its count and lastTimestamp patched (strategic "
          "merge, as the event recorder does for a repeat); one in another namespace refused; an "
          "events.k8s.io/v1 Event posted; one without a reason refused",
          {Req("POST", "/api/v1/namespaces/default/events", core),
           Req("PATCH", "/api/v1/namespaces/default/events/ev-node.17c0a1b2c3d4e5f6",
               {{"count", 2},
                {"lastTimestamp", "2026-12-02T01:00:05Z"},
                {"message", "Node synced successfully"}},
               kStrategicPatch),
           Req("POST", "/apis/events.k8s.io/v1/namespaces/corpus/events", v1),
           Req("POST", "/api/v1/namespaces/corpus/events",
               [&] {
                 json in_wrong_ns = core;
                 in_wrong_ns["metadata"]["name"] = "ev-node.17c0a1b2c3d4e5f8";
                 in_wrong_ns["metadata"]["namespace"] = "corpus";
                 return in_wrong_ns;
               }()),
           Req("POST", "/apis/events.k8s.io/v1/namespaces/corpus/events",
               {{"apiVersion", "events.k8s.io/v1"},
                {"kind", "Event"},
                {"metadata", {{"name", "ev-bad"}, {"namespace", "corpus"}}},
                {"eventTime", "2026-12-02T01:00:00.000000Z"},
                {"type", "Warning"},
                {"reportingController", "x"},
                {"reportingInstance", "y"},
                {"action", "z"}})}};
}

CorpusCase SelectorsAndPaging() {
  return {"list-selectors-and-paging",
          "lists with a label selector, a field selector on metadata.name (the Secret informers'), "
          "a field selector the resource does not support (400), Pods by spec.nodeName, and pages "
          "of two with their continue token",
          {Req("POST", kCm, ConfigMap("ls-a", {{"k", "a"}}, {{"tier", "front"}})),
           Req("POST", kCm, ConfigMap("ls-b", {{"k", "b"}}, {{"tier", "back"}})),
           Req("POST", kCm, ConfigMap("ls-c", {{"k", "c"}}, {{"tier", "front"}})),
           Req("GET", std::string(kCm) + "?labelSelector=tier%3Dfront"),
           Req("GET", std::string(kCm) + "?labelSelector=tier%20in%20(back)%2Capp%21%3Dx"),
           Req("GET", std::string(kCm) + "?fieldSelector=metadata.name%3Dls-b"),
           Req("GET", std::string(kCm) + "?fieldSelector=spec.foo%3Dx"),
           Req("GET", "/api/v1/namespaces/corpus/pods?fieldSelector=spec.nodeName%3Dnode-x"),
           Req("GET", std::string(kCm) + "?labelSelector=tier&limit=2"),
           Req("GET", std::string(kCm) + "?labelSelector=tier&limit=2&continue=${continue:8}")}};
}

CorpusCase WatchReplayAndBookmark() {
  const std::string one = std::string(kCm) + "/wr-cm";
  return {"watch-replay-and-bookmark",
          "a watch from an earlier version replays what happened since (MODIFIED, DELETED) in "
          "order; asked for bookmarks, it gets none when nothing was written after it began, even "
          "though another ConfigMap was made after its last event (the replay passed that version "
          "too); one without bookmarks and with nothing to say ends empty",
          {Req("POST", kCm, ConfigMap("wr-cm", {{"k", "1"}})),
           Req("PUT", one, ConfigMap("wr-cm", {{"k", "2"}}, json::object(), "${rv:0}")),
           Req("DELETE", one), Req("POST", kCm, ConfigMap("wr-other", {{"k", "1"}})),
           Watch(std::string(kCm) +
                 "?watch=true&resourceVersion=${rv:0}&fieldSelector=metadata.name%3Dwr-cm"
                 "&allowWatchBookmarks=true&timeoutSeconds=3"),
           Watch(std::string(kCm) +
                 "?watch=true&resourceVersion=${rv:3}&fieldSelector=metadata.name%3Dwr-cm"
                 "&allowWatchBookmarks=true&timeoutSeconds=3"),
           Watch(std::string(kCm) +
                 "?watch=true&resourceVersion=${rv:1}&fieldSelector=metadata.name%3Dno-such"
                 "&timeoutSeconds=1")}};
}

CorpusCase WatchTooOld() {
  return {"watch-too-old-and-relist",
          "a watch from a version the server no longer has: 200 and one ERROR event carrying "
          "410 Expired; the informer lists again and watches from the list's version",
          {Req("POST", kCm, ConfigMap("to-cm", {{"k", "1"}})),
           Watch(std::string(kCm) + "?watch=true&resourceVersion=${rv:too-old}&timeoutSeconds=2"),
           Req("GET", std::string(kCm) + "?fieldSelector=metadata.name%3Dto-cm"),
           Watch(std::string(kCm) +
                 "?watch=true&resourceVersion=${rv:2}&fieldSelector=metadata.name%3Dto-cm"
                 "&timeoutSeconds=1")}};
}

const json* Crd(const std::vector<json>& crds, const std::string& name) {
  for (const json& c : crds) {
    if (c.value("/metadata/name"_json_pointer, std::string()) == name) return &c;
  }
  return nullptr;
}

CorpusCase CrdPruning(const std::vector<json>& crds) {
  const std::string plural = "/apis/cns.vmware.com/v1alpha1/cnsvspherevolumemigrations";
  const std::string infos = "/apis/cns.vmware.com/v1alpha1/namespaces/corpus/cnsvolumeinfoes";
  json migration = {{"apiVersion", "cns.vmware.com/v1alpha1"},
                    {"kind", "CnsVSphereVolumeMigration"},
                    {"metadata", {{"name", "cp-volume"}}},
                    {"spec",
                     {{"volumeid", "cp-volume"},
                      {"volumepath", "[ds1] kubevols/cp.vmdk"},
                      {"protectvolumefromvmdelete", false},
                      {"notInSchema", "dropped"}}},
                    {"status", {{"anything", 1}}}};
  CorpusStep create_migration = Req("POST", plural, migration);
  create_migration.request.until_code = 201;  // the CRD serves once established
  json wrong_type = migration;
  wrong_type["metadata"]["name"] = "cp-wrong";
  wrong_type["spec"]["volumeid"] = 5;
  json info = {{"apiVersion", "cns.vmware.com/v1alpha1"},
               {"kind", "CNSVolumeInfo"},
               {"metadata", {{"name", "cp-info"}, {"namespace", "corpus"}}},
               {"spec",
                {{"volumeID", "cp-info"},
                 {"vCenterServer", "vc-2"},
                 {"capacity", "1Gi"},
                 {"extra", {{"kept", true}}}}},
               {"unknownTopLevel", "dropped"}};
  CorpusStep create_info = Req("POST", infos, info);
  create_info.request.until_code = 201;
  std::vector<CorpusStep> steps;
  for (const char* name :
       {"cnsvspherevolumemigrations.cns.vmware.com", "cnsvolumeinfoes.cns.vmware.com"}) {
    const json* crd = Crd(crds, name);
    steps.push_back(Req("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                        crd != nullptr ? *crd : json::object()));
  }
  steps.push_back(create_migration);
  steps.push_back(Req("GET", plural + "/cp-volume"));
  steps.push_back(Req("PATCH", plural + "/cp-volume",
                      {{"spec", {{"protectvolumefromvmdelete", true}, {"alsoNotInSchema", 1}}}},
                      kMergePatch));
  steps.push_back(Req("POST", plural, wrong_type));
  steps.push_back(create_info);
  steps.push_back(Req("DELETE", plural + "/cp-volume"));
  return {"crd-pruning",
          "the CSI driver's CRDs: a custom resource keeps only what its schema names (unknown "
          "spec and status members and unknown top-level fields pruned, on create and on patch), "
          "x-kubernetes-preserve-unknown-fields keeps the rest, a member of the wrong type is "
          "422 Invalid",
          steps};
}

CorpusCase StorageDefaults() {
  json pv = {{"apiVersion", "v1"},
             {"kind", "PersistentVolume"},
             {"metadata", {{"name", "sd-pv"}}},
             {"spec",
              {{"capacity", {{"storage", "1Gi"}}},
               {"accessModes", {"ReadWriteOnce"}},
               {"csi", {{"driver", "csi.vsphere.vmware.com"}, {"volumeHandle", "sd-volume"}}}}}};
  json pvc = {{"apiVersion", "v1"},
              {"kind", "PersistentVolumeClaim"},
              {"metadata", {{"name", "sd-pvc"}, {"namespace", "corpus"}}},
              {"spec",
               {{"accessModes", {"ReadWriteOnce"}},
                {"storageClassName", ""},
                {"volumeName", "sd-pv"},
                {"resources", {{"requests", {{"storage", "1Gi"}}}}}}}};
  return {
      "storage-defaults",
      "a PV and a PVC as the syncer and webhook read them: the server's defaults (reclaim "
      "policy, volume mode, Pending phase), a PVC status patch, a CSINode, VolumeAttachments "
      "listed",
      {Req("POST", "/api/v1/persistentvolumes", pv),
       Req("POST", "/api/v1/namespaces/corpus/persistentvolumeclaims", pvc),
       Req("PATCH", "/api/v1/namespaces/corpus/persistentvolumeclaims/sd-pvc/status",
           {{"status", {{"phase", "Bound"}, {"capacity", {{"storage", "1Gi"}}}}}}, kMergePatch),
       Req("POST", "/apis/storage.k8s.io/v1/csinodes",
           {{"apiVersion", "storage.k8s.io/v1"},
            {"kind", "CSINode"},
            {"metadata", {{"name", "sd-node"}}},
            {"spec",
             {{"drivers",
               {{{"name", "csi.vsphere.vmware.com"},
                 {"nodeID", "4237a4a0-c7e1-4b0a-8bd8-1c39b8a3f001"},
                 {"topologyKeys", {"topology.csi.vmware.com/k8s-zone"}},
                 {"allocatable", {{"count", 59}}}}}}}}}),
       Req("GET", "/apis/storage.k8s.io/v1/volumeattachments?fieldSelector=metadata.name%3Dnone"),
       Req("DELETE", "/api/v1/namespaces/corpus/persistentvolumeclaims/sd-pvc"),
       Req("DELETE", "/api/v1/persistentvolumes/sd-pv"),
       Req("DELETE", "/apis/storage.k8s.io/v1/csinodes/sd-node")}};
}

json LbService(const std::string& rv = "") {
  json s = {{"apiVersion", "v1"},
            {"kind", "Service"},
            {"metadata", {{"name", "lb-web"}, {"namespace", "corpus"}}},
            {"spec",
             {{"type", "LoadBalancer"},
              {"clusterIP", "10.0.0.50"},
              {"selector", {{"app", "web"}}},
              {"ports", {{{"port", 80}, {"nodePort", 30080}, {"protocol", "TCP"}}}}}}};
  if (!rv.empty()) s["metadata"]["resourceVersion"] = rv;
  return s;
}

json Finalizers(const json& list, const std::string& rv) {
  return {{"metadata", {{"finalizers", list}, {"resourceVersion", rv}}}};
}

CorpusCase ServiceLoadBalancer() {
  const std::string services = "/api/v1/namespaces/corpus/services";
  const std::string one = services + "/lb-web";
  const json cleanup = json::array({"service.kubernetes.io/load-balancer-cleanup"});
  return {
      "service-load-balancer",
      "a Service of type LoadBalancer as the NSX-T service controller writes it: the server's "
      "defaults; the cleanup finalizer by a merge PATCH at the read resourceVersion, again at a "
      "stale one (409); status.loadBalancer.ingress by a merge PATCH of the status subresource, "
      "then cleared (null); a DELETE held by the finalizer (deletionTimestamp set), the finalizer "
      "removed at the read version, the Service gone (404)",
      {Req("POST", services, LbService()),
       Req("PATCH", one, Finalizers(cleanup, "${rv:0}"), kMergePatch),
       Req("PATCH", one, Finalizers(cleanup, "${rv:0}"), kMergePatch),
       Req("PATCH", one + "/status",
           {{"status", {{"loadBalancer", {{"ingress", {{{"ip", "10.1.0.10"}}}}}}}}}, kMergePatch),
       Req("PATCH", one + "/status", {{"status", {{"loadBalancer", {{"ingress", nullptr}}}}}},
           kMergePatch),
       Req("DELETE", one), Req("PATCH", one, Finalizers(json::array(), "${rv:5}"), kMergePatch),
       Req("GET", one)}};
}

CorpusCase NodeNetworkCondition() {
  const std::string one = "/api/v1/nodes/nc-node";
  json node = Node();
  node["metadata"]["name"] = "nc-node";
  node["metadata"]["labels"]["kubernetes.io/hostname"] = "nc-node";
  node["spec"]["podCIDR"] = "10.244.3.0/24";
  node["spec"]["podCIDRs"] = {"10.244.3.0/24"};
  auto condition = [](const std::string& status, const std::string& reason) {
    return json{{"status",
                 {{"conditions",
                   {{{"type", "NetworkUnavailable"},
                     {"status", status},
                     {"reason", reason},
                     {"message", "RouteController created a route"},
                     {"lastTransitionTime", "2026-12-02T01:00:10Z"},
                     {"lastHeartbeatTime", "2026-12-02T01:00:10Z"}}}}}}};
  };
  return {"node-network-condition",
          "the route controller's condition: a strategic PATCH of a Node's status adds "
          "NetworkUnavailable beside the kubelet's Ready (conditions merge by type), a second one "
          "replaces it, delete",
          {Req("POST", "/api/v1/nodes", node),
           Req("PATCH", one + "/status", condition("False", "RouteCreated"), kStrategicPatch),
           Req("PATCH", one + "/status", condition("True", "NoRouteCreated"), kStrategicPatch),
           Req("DELETE", one)}};
}

}  // namespace

std::vector<CorpusCase> ApiCorpusScript(const std::vector<json>& crds) {
  return {
      OptimisticConcurrency(), LeaderElection(),         NodeStatusSubresource(), Events(),
      SelectorsAndPaging(),    WatchReplayAndBookmark(), WatchTooOld(),           CrdPruning(crds),
      StorageDefaults(),       ServiceLoadBalancer(),    NodeNetworkCondition()};
}

}  // namespace ccm::peers
