#pragma once
// Follows the feature-state ConfigMap (csi/core/feature_states.h) through an informer on that one
// object, as the reference's ConfigMap listener does: a change applies at once and is logged
// feature by feature. Differences from the reference, on purpose:
//   - No ConfigMap (or no API access): the process starts with every feature that is not
//     released off, and says so; the reference refuses to start.
//   - The ConfigMap deleted while running: the last states stay, with an error in the log; the
//     reference exits and then cannot start.

#include <memory>
#include <string>

#include "absl/time/time.h"
#include "csi/core/feature_states.h"
#include "kube/client.h"
#include "kube/informer.h"

namespace ccm::app {

struct FeatureStateSource {
  std::string ns;    // --fss-namespace, else $CSI_NAMESPACE, else vmware-system-csi
  std::string name;  // --fss-name, else internal-feature-states.csi.vsphere.vmware.com
};
FeatureStateSource FeatureStateSourceOf(const std::string& fss_name,
                                        const std::string& fss_namespace,
                                        const std::map<std::string, std::string>& env);

class FeatureStateWatch {
 public:
  FeatureStateWatch(kube::Client& client, FeatureStateSource source,
                    std::shared_ptr<csi::FeatureStates> states);
  ~FeatureStateWatch();  // Stop()
  // Starts the informer and waits up to `timeout` for its first list; logs the states.
  void Start(absl::Duration timeout = absl::Seconds(5));
  void Stop();

 private:
  void Apply(const kube::Json& configmap);
  FeatureStateSource source_;
  std::shared_ptr<csi::FeatureStates> states_;
  bool first_ = true;  // Apply runs on the informer's thread only
  kube::Informer informer_;
};

}  // namespace ccm::app
