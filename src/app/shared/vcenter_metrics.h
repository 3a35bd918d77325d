#pragma once
// vCenter request metrics shared by both binaries: the Go provider's names (which it defines but
// never exposes) plus counts by outcome. CNS calls of the CSI driver go through the same observer.

#include <functional>
#include <string>

#include "common/metrics.h"
#include "vsphere/client.h"

namespace ccm::app {

// Observer for one vCenter's SOAP client (and the CNS client that shares its options).
vsphere::RequestObserver VCenterRequestObserver(metrics::Registry& r, const std::string& vcenter);

// The CSI driver's observer: VCenterRequestObserver's metrics plus the reference CSI driver's
// vsphere_request_ops_seconds{request,client,status} (its buckets, 2 s to 180 s): request = the
// SOAP method, client = "cns" (CNS calls), "pbm" (storage policies) or "soap" (vim25), status =
// "success" or "fail-unknown", as the reference's round tripper records them.
vsphere::RequestObserver CsiRequestObserver(metrics::Registry& r, const std::string& vcenter);

// The reference's client label for a SOAP method.
absl::string_view ReferenceClientOf(absl::string_view method);

// The reference's vsphere_cns_volume_ops_histogram{optype,status} (its buckets, 2 s to 180 s):
// one observation per CNS operation, a change from its start to its task's end or a query, for
// vsphere::cns::CnsClientOptions::observer.
std::function<void(absl::string_view optype, bool ok, absl::Duration elapsed)>
CnsOperationsObserver(metrics::Registry& r);

}  // namespace ccm::app
