#pragma once
// vCenter request metrics shared by both binaries: the Go provider's names (which it defines but
// never exposes) plus counts by outcome. CNS calls of the CSI driver go through the same observer.

#include <string>

#include "common/metrics.h"
#include "vsphere/client.h"

namespace ccm::app {

// Observer for one vCenter's SOAP client (and the CNS client that shares its options).
vsphere::RequestObserver VCenterRequestObserver(metrics::Registry& r, const std::string& vcenter);

}  // namespace ccm::app
