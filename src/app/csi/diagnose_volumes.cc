#include "app/csi/diagnose_volumes.h"

#include <map>
#include <set>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "app/shared/diagnose_cluster.h"
#include "csi/controller/controller_backend.h"
#include "csi/controller/controller_service.h"
#include "csi/server/proto_convert.h"
#include "diagnose/volume_checks.h"
#include "kube/quantity.h"
#include "kube/resource.h"

namespace ccm::app {
namespace {

using kube::Json;
using AccessMode = ::csi::v1::VolumeCapability::AccessMode;

constexpr char kDriver[] = "csi.vsphere.vmware.com";
constexpr char kSelectedNode[] = "volume.kubernetes.io/selected-node";
const Json kEmpty = Json::object();

std::map<std::string, std::string> Labels(const Json& obj) {
  std::map<std::string, std::string> out;
  const Json labels = obj.value("metadata", kEmpty).value("labels", kEmpty);
  for (const auto& [k, v] : labels.items()) {
    if (v.is_string()) out[k] = v.get<std::string>();
  }
  return out;
}

absl::Duration Since(const Json& meta, const char* field) {
  absl::Time t;
  std::string err;
  if (!absl::ParseTime(absl::RFC3339_full, meta.value(field, ""), &t, &err)) {
    return absl::ZeroDuration();
  }
  return absl::Now() - t;
}

// The controller's view, loaded; nullptr with a line saying why when it does not load.
std::shared_ptr<csi::ControllerBackend> LoadBackend(const cloud::Config& config,
                                                    std::shared_ptr<kube::Client> api,
                                                    diagnose::Report& report) {
  cloud::Config c = config;
  if (c.global.cluster_id.empty()) c.global.cluster_id = "diagnose";  // placement needs none
  csi::BackendOptions o;
  o.kube = std::move(api);
  o.clean_operations = false;
  absl::StatusOr<std::unique_ptr<csi::ControllerBackend>> b = csi::ControllerBackend::Create(c, o);
  absl::Status s = b.ok() ? (*b)->Start() : b.status();
  if (!s.ok()) {
    report.Warn("volumes", absl::StrCat("volume checks skipped: ", s.message()),
                "fix the config so the controller can start");
    return nullptr;
  }
  std::shared_ptr<csi::ControllerBackend> backend = *std::move(b);
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  std::string why;
  while (!backend->Ready(&why) || !backend->nodes()->List().ok()) {
    if (absl::Now() > deadline) {
      report.Warn("volumes",
                  absl::StrCat("volume checks skipped: the controller's view did not load in "
                               "30 s: ",
                               why.empty() ? "the Nodes are not listed" : why),
                  "fix the vCenter errors above");
      return nullptr;
    }
    absl::SleepFor(absl::Milliseconds(100));
  }
  return backend;
}

// allowedTopologies as terms of (key, values).
std::vector<diagnose::TopologyTerm> AllowedTopologies(const Json& sc) {
  std::vector<diagnose::TopologyTerm> out;
  for (const Json& term : sc.value("allowedTopologies", Json::array())) {
    diagnose::TopologyTerm t;
    for (const Json& e : term.value("matchLabelExpressions", Json::array())) {
      t.emplace_back(e.value("key", ""), e.value("values", std::vector<std::string>{}));
    }
    out.push_back(std::move(t));
  }
  return out;
}

// Every segment a term allows (the product of its expressions' values).
std::vector<csi::Segments> Expand(const diagnose::TopologyTerm& term) {
  std::vector<csi::Segments> out = {{}};
  for (const auto& [key, values] : term) {
    std::vector<csi::Segments> next;
    for (const csi::Segments& s : out) {
      for (const std::string& v : values) {
        csi::Segments n = s;
        n[key] = v;
        next.push_back(std::move(n));
      }
    }
    out = std::move(next);
  }
  return out;
}

// The accessibility requirement the external-provisioner sends: the selected node's topology,
// else the allowedTopologies, else every Node's topology; none without topology in the config.
std::vector<csi::Segments> Requisite(const csi::TopologyConfig& topology, const Json& sc,
                                     const std::vector<Json>& nodes, const std::string& selected) {
  if (csi::ModeOf(topology) == csi::TopologyMode::kNone) return {};
  std::set<csi::Segments> out;
  for (const Json& n : nodes) {
    if (!selected.empty() && n.value("metadata", kEmpty).value("name", "") != selected) continue;
    if (absl::StatusOr<csi::Segments> s = csi::NodeTopology(Labels(n), topology); s.ok()) {
      out.insert(*s);
    }
  }
  if (selected.empty() && sc.contains("allowedTopologies")) {
    out.clear();
    for (const diagnose::TopologyTerm& t : AllowedTopologies(sc)) {
      for (csi::Segments& s : Expand(t)) out.insert(std::move(s));
    }
  }
  return {out.begin(), out.end()};
}

struct VolumeAsk {
  int64_t bytes = int64_t{1} << 30;
  bool block = false;
  std::vector<std::string> access_modes = {"ReadWriteOnce"};
  std::vector<csi::Segments> requisite;
};

AccessMode::Mode ModeOf(const std::string& k8s) {
  if (k8s == "ReadOnlyMany") return AccessMode::MULTI_NODE_READER_ONLY;
  if (k8s == "ReadWriteMany") return AccessMode::MULTI_NODE_MULTI_WRITER;
  if (k8s == "ReadWriteOncePod") return AccessMode::SINGLE_NODE_SINGLE_WRITER;
  return AccessMode::SINGLE_NODE_WRITER;
}

// The CreateVolumeRequest the external-provisioner would send for `sc`.
::csi::v1::CreateVolumeRequest RequestFor(const std::string& name, const Json& sc,
                                          const VolumeAsk& ask) {
  ::csi::v1::CreateVolumeRequest req;
  req.set_name(name);
  req.mutable_capacity_range()->set_required_bytes(ask.bytes);
  for (const std::string& m : ask.access_modes) {
    ::csi::v1::VolumeCapability* cap = req.add_volume_capabilities();
    ask.block ? (void)cap->mutable_block() : (void)cap->mutable_mount();
    cap->mutable_access_mode()->set_mode(ModeOf(m));
  }
  const Json params = sc.value("parameters", kEmpty);
  for (const auto& [k, v] : params.items()) {
    // The provisioner keeps its own csi.storage.k8s.io/ keys (secrets, fstype) to itself.
    if (!absl::StartsWith(k, "csi.storage.k8s.io/") && v.is_string()) {
      (*req.mutable_parameters())[k] = v.get<std::string>();
    }
  }
  for (const csi::Segments& s : ask.requisite) {
    csi::ToProto(s, req.mutable_accessibility_requirements()->add_requisite());
    csi::ToProto(s, req.mutable_accessibility_requirements()->add_preferred());
  }
  return req;
}

diagnose::CreateVerdict Ask(csi::ControllerService& svc, const ::csi::v1::CreateVolumeRequest& r) {
  absl::StatusOr<std::vector<std::string>> plan = svc.PlanCreate(r);
  if (!plan.ok()) return {plan.status(), {}};
  return {absl::OkStatus(), *std::move(plan)};
}

std::vector<std::vector<std::pair<std::string, std::string>>> NodeLabelPairs(
    const std::vector<Json>& nodes) {
  std::vector<std::vector<std::pair<std::string, std::string>>> out;
  for (const Json& n : nodes) {
    std::map<std::string, std::string> l = Labels(n);
    out.emplace_back(l.begin(), l.end());
  }
  return out;
}

// What the driver's hosts carry: the distinct segments, and the hosts without a complete one.
void CheckHostTopology(csi::ControllerBackend& b, const csi::TopologyConfig& topology,
                       diagnose::Report& report) {
  if (csi::ModeOf(topology) == csi::TopologyMode::kNone) return;
  absl::StatusOr<csi::PlacementView::SnapshotPtr> view = b.datastores().Snapshot();
  if (!view.ok()) return;
  std::map<csi::Segments, int> segments;
  std::vector<std::string> bare;
  for (const csi::HostRecord& h : (*view)->hosts) {
    h.segment ? (void)++segments[*h.segment] : bare.push_back(absl::StrCat(h.vcenter, "/", h.name));
  }
  std::vector<std::string> seen;
  for (const auto& [s, n] : segments) {
    seen.push_back(absl::StrCat(csi::FormatSegments(s), " (", n, n == 1 ? " host)" : " hosts)"));
  }
  const std::string keys = absl::StrJoin(csi::TopologyKeys(topology), ", ");
  if (!seen.empty())
    report.Ok("zones", absl::StrCat("hosts by topology: ", absl::StrJoin(seen, ", ")));
  if (!bare.empty()) {
    report.Warn("zones",
                absl::StrCat(bare.size(), " host", bare.size() == 1 ? "" : "s",
                             " without a value for every topology key (", keys,
                             "): ", absl::StrJoin(bare, ", ")),
                "tag the hosts, their cluster or datacenter with the configured categories; "
                "datastores are offered to zoned volumes only from tagged hosts");
  }
}

std::map<std::string, Json> DriverClasses(const std::vector<Json>& all) {
  std::map<std::string, Json> out;
  for (const Json& sc : all) {
    if (sc.value("provisioner", "") == kDriver) {
      out[sc.value("metadata", kEmpty).value("name", "")] = sc;
    }
  }
  return out;
}

std::vector<diagnose::StorageClassFacts> ClassFacts(csi::ControllerService* svc,
                                                    const csi::TopologyConfig& topology,
                                                    const std::map<std::string, Json>& classes,
                                                    const std::vector<Json>& nodes) {
  std::vector<diagnose::StorageClassFacts> out;
  for (const auto& [name, sc] : classes) {
    diagnose::StorageClassFacts f;
    f.name = name;
    f.unknown_topology = diagnose::TopologyNoNodeHas(AllowedTopologies(sc), NodeLabelPairs(nodes));
    if (svc != nullptr) {
      VolumeAsk ask;
      ask.requisite = Requisite(topology, sc, nodes, "");
      f.verdict = Ask(*svc, RequestFor("diagnose-" + name, sc, ask));
    }
    out.push_back(std::move(f));
  }
  return out;
}

std::string ClassOf(const Json& pvc, const std::map<std::string, Json>& classes) {
  const Json& spec = pvc.value("spec", kEmpty);
  if (spec.contains("storageClassName") && spec["storageClassName"].is_string()) {
    return spec["storageClassName"].get<std::string>();
  }
  for (const auto& [name, sc] : classes) {
    const Json& a = sc.value("metadata", kEmpty).value("annotations", kEmpty);
    if (a.value("storageclass.kubernetes.io/is-default-class", "") == "true") return name;
  }
  return "";
}

VolumeAsk AskOf(const Json& pvc) {
  const Json& spec = pvc.value("spec", kEmpty);
  VolumeAsk ask;
  std::string size = spec.value("resources", kEmpty).value("requests", kEmpty).value("storage", "");
  if (absl::StatusOr<long double> q = kube::ParseQuantity(size); q.ok() && *q > 0) {
    ask.bytes = static_cast<int64_t>(*q);
  }
  ask.block = spec.value("volumeMode", "") == "Block";
  if (spec.contains("accessModes")) {
    ask.access_modes = spec.value("accessModes", std::vector<std::string>{});
  }
  return ask;
}

std::vector<diagnose::PvcFacts> ClaimFacts(csi::ControllerService* svc,
                                           const csi::TopologyConfig& topology,
                                           const std::map<std::string, Json>& classes,
                                           const std::vector<Json>& claims, kube::Client& api,
                                           const std::vector<Json>& nodes) {
  std::vector<diagnose::PvcFacts> out;
  std::map<std::string, std::vector<Json>> events;  // by namespace
  for (const Json& pvc : claims) {
    const Json& meta = pvc.value("metadata", kEmpty);
    // The API server defaults an absent phase to Pending; a volumeName waits for binding.
    const std::string phase = pvc.value("status", kEmpty).value("phase", "");
    if ((phase != "Pending" && !phase.empty()) ||
        !pvc.value("spec", kEmpty).value("volumeName", "").empty()) {
      continue;
    }
    auto sc = classes.find(ClassOf(pvc, classes));
    if (sc == classes.end()) continue;
    const std::string ns = meta.value("namespace", ""), name = meta.value("name", "");
    diagnose::PvcFacts p;
    p.name = absl::StrCat(ns, "/", name);
    p.storage_class = sc->first;
    p.age = Since(meta, "creationTimestamp");
    const std::string selected = meta.value("annotations", kEmpty).value(kSelectedNode, "");
    p.waiting_for_consumer =
        sc->second.value("volumeBindingMode", "") == "WaitForFirstConsumer" && selected.empty();
    if (!p.waiting_for_consumer && svc != nullptr) {
      VolumeAsk ask = AskOf(pvc);
      ask.requisite = Requisite(topology, sc->second, nodes, selected);
      p.verdict = Ask(*svc, RequestFor("pvc-" + meta.value("uid", name), sc->second, ask));
    }
    // The Events matter only for a claim CreateVolume would place that has waited long: read
    // them then, once per namespace.
    if (p.verdict && p.verdict->status.ok() && p.age >= diagnose::kStuckAfter) {
      auto it = events.find(ns);
      if (it == events.end()) {
        absl::StatusOr<kube::ListResult> l = api.List(kube::CoreEvents(), ns, {});
        it = events.emplace(ns, l.ok() ? std::move(l->items) : std::vector<Json>{}).first;
      }
      p.last_failure = NewestProvisioningFailure(it->second, name);
    }
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<diagnose::AttachmentFacts> AttachmentFactsOf(const std::vector<Json>& all,
                                                         const std::vector<Json>& nodes) {
  std::set<std::string> node_names;
  for (const Json& n : nodes) node_names.insert(n.value("metadata", kEmpty).value("name", ""));
  std::vector<diagnose::AttachmentFacts> out;
  for (const Json& va : all) {
    const Json& spec = va.value("spec", kEmpty);
    if (spec.value("attacher", "") != kDriver) continue;
    const Json& meta = va.value("metadata", kEmpty);
    const Json& status = va.value("status", kEmpty);
    diagnose::AttachmentFacts a;
    a.name = meta.value("name", "");
    a.node = spec.value("nodeName", "");
    a.pv = spec.value("source", kEmpty).value("persistentVolumeName", "(inline volume)");
    a.attached = status.value("attached", false);
    a.node_exists = node_names.contains(a.node);
    a.attach_error = status.value("attachError", kEmpty).value("message", "");
    a.detach_error = status.value("detachError", kEmpty).value("message", "");
    a.age = Since(meta, "creationTimestamp");
    if (meta.contains("deletionTimestamp")) a.deleting_for = Since(meta, "deletionTimestamp");
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace

std::string NewestProvisioningFailure(const std::vector<Json>& events, const std::string& claim) {
  std::string newest, message;
  for (const Json& e : events) {
    const Json& o = e.value("involvedObject", kEmpty);
    if (o.value("kind", "") != "PersistentVolumeClaim" || o.value("name", "") != claim ||
        e.value("reason", "") != "ProvisioningFailed") {
      continue;
    }
    // RFC 3339 in UTC compares as text; an Event without a time does not win over one with.
    const std::string when = e.value("lastTimestamp", "");
    if (message.empty() || when > newest) {
      newest = when;
      message = e.value("message", "");
    }
  }
  return message;
}

void DiagnoseVolumes(const cloud::Config& config, std::shared_ptr<kube::Client> api,
                     const std::vector<Json>& nodes, diagnose::Report& report) {
  const csi::TopologyConfig topology = csi::TopologyOf(config);
  std::shared_ptr<csi::ControllerBackend> backend = LoadBackend(config, api, report);
  std::unique_ptr<csi::ControllerService> svc;
  if (backend != nullptr) {
    svc = std::make_unique<csi::ControllerService>(backend);
    CheckHostTopology(*backend, topology, report);
  }
  absl::StatusOr<std::vector<Json>> classes = ListAll(*api, kube::StorageClasses());
  absl::StatusOr<std::vector<Json>> claims = ListAll(*api, kube::PersistentVolumeClaims());
  absl::StatusOr<std::vector<Json>> attachments = ListAll(*api, kube::VolumeAttachments());
  for (const absl::StatusOr<std::vector<Json>>* l : {&classes, &claims, &attachments}) {
    if (!l->ok()) {
      report.Error("volumes", absl::StrCat("cannot list: ", l->status().message()),
                   "let the driver's account list StorageClasses, PersistentVolumeClaims, "
                   "VolumeAttachments and Events (the syncer's role does)");
      if (backend != nullptr) backend->Stop();
      return;
    }
  }
  const std::map<std::string, Json> ours = DriverClasses(*classes);
  diagnose::JudgeStorageClasses(ClassFacts(svc.get(), topology, ours, nodes), report);
  diagnose::JudgePvcs(ClaimFacts(svc.get(), topology, ours, *claims, *api, nodes), report);
  diagnose::JudgeAttachments(AttachmentFactsOf(*attachments, nodes), report);
  if (backend != nullptr) backend->Stop();
}

}  // namespace ccm::app
