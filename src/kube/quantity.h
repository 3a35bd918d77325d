#pragma once
// Kubernetes resource quantities ("1Gi", "500M", "1.5e3", "100m"): the value as a number, for
// comparisons (a PVC's storage request grew or not). Suffixes as resource.Quantity: binary Ki Mi
// Gi Ti Pi Ei, decimal n u m k M G T P E, and decimal exponents (e3, E-2).

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ccm::kube {

// InvalidArgument naming the text when it is not a quantity.
absl::StatusOr<long double> ParseQuantity(absl::string_view text);

}  // namespace ccm::kube
