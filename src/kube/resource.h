#pragma once
// Addressing of the Kubernetes resources we use: group/version/plural and whether the resource
// lives in a namespace. The REST path is derived from these (core group under /api, others under
// /apis/<group>).

#include <string>

#include "absl/strings/string_view.h"

namespace ccm::kube {

struct Resource {
  std::string group;    // "" for core
  std::string version;  // "v1"
  std::string plural;   // "nodes"
  std::string kind;     // "Node" (filled into created objects that lack it)
  bool namespaced = false;

  std::string api_version() const { return group.empty() ? version : group + "/" + version; }
  // "/api/v1/nodes", "/api/v1/namespaces/<ns>/secrets/<name>/status", ...
  // For namespaced resources an empty `ns` means all namespaces (list/watch only).
  std::string Path(absl::string_view ns, absl::string_view name = "",
                   absl::string_view subresource = "") const;
};

// core/v1
const Resource& Nodes();
const Resource& Secrets();
const Resource& ConfigMaps();
const Resource& CoreEvents();
const Resource& Namespaces();
const Resource& PersistentVolumes();
const Resource& PersistentVolumeClaims();
const Resource& Pods();
const Resource& Services();
// coordination.k8s.io/v1
const Resource& Leases();
// events.k8s.io/v1
const Resource& Events();
// storage.k8s.io/v1
const Resource& StorageClasses();
const Resource& VolumeAttachments();
const Resource& CsiNodes();

}  // namespace ccm::kube
