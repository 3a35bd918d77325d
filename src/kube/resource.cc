#include "kube/resource.h"

#include "absl/strings/str_cat.h"

namespace ccm::kube {

std::string Resource::Path(absl::string_view ns, absl::string_view name,
                           absl::string_view subresource) const {
  std::string p =
      group.empty() ? absl::StrCat("/api/", version) : absl::StrCat("/apis/", group, "/", version);
  if (namespaced && !ns.empty()) absl::StrAppend(&p, "/namespaces/", ns);
  absl::StrAppend(&p, "/", plural);
  if (!name.empty()) absl::StrAppend(&p, "/", name);
  if (!subresource.empty()) absl::StrAppend(&p, "/", subresource);
  return p;
}

const Resource& Nodes() {
  static const Resource r{"", "v1", "nodes", "Node", false};
  return r;
}
const Resource& PersistentVolumes() {
  static const Resource r{"", "v1", "persistentvolumes", "PersistentVolume", false};
  return r;
}
const Resource& PersistentVolumeClaims() {
  static const Resource r{"", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", true};
  return r;
}
const Resource& Pods() {
  static const Resource r{"", "v1", "pods", "Pod", true};
  return r;
}
const Resource& Services() {
  static const Resource r{"", "v1", "services", "Service", true};
  return r;
}
const Resource& Secrets() {
  static const Resource r{"", "v1", "secrets", "Secret", true};
  return r;
}
const Resource& ConfigMaps() {
  static const Resource r{"", "v1", "configmaps", "ConfigMap", true};
  return r;
}
const Resource& CoreEvents() {
  static const Resource r{"", "v1", "events", "Event", true};
  return r;
}
const Resource& Namespaces() {
  static const Resource r{"", "v1", "namespaces", "Namespace", false};
  return r;
}
const Resource& Leases() {
  static const Resource r{"coordination.k8s.io", "v1", "leases", "Lease", true};
  return r;
}
const Resource& Events() {
  static const Resource r{"events.k8s.io", "v1", "events", "Event", true};
  return r;
}
const Resource& StorageClasses() {
  static const Resource r{"storage.k8s.io", "v1", "storageclasses", "StorageClass", false};
  return r;
}
const Resource& VolumeAttachments() {
  static const Resource r{"storage.k8s.io", "v1", "volumeattachments", "VolumeAttachment", false};
  return r;
}

const Resource& CsiNodes() {
  static const Resource r{"storage.k8s.io", "v1", "csinodes", "CSINode", false};
  return r;
}

}  // namespace ccm::kube
