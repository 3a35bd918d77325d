#pragma once
// The reference's feature states (FSS): ConfigMap internal-feature-states.csi.vsphere.vmware.com
// in the driver's namespace (--fss-name, --fss-namespace), read by the controller, the syncer and
// the node plugin, and followed live. Its vanilla rules, kept here:
//   - A released feature is on whatever the ConfigMap says (the reference's released set).
//   - Otherwise the ConfigMap's value, read as Go's strconv.ParseBool ("1", "t", "T", "true",
//     "TRUE", "True" and their false forms); absent or unreadable: off.
// The features this driver acts on are named below; the others are accepted and reported by
// Describe (so an operator sees what is set and what it does here).

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace ccm::csi {

inline constexpr char kFeatureStatesConfigMap[] = "internal-feature-states.csi.vsphere.vmware.com";
inline constexpr char kDefaultCsiNamespace[] = "vmware-system-csi";

// Acted on (the reference's vanilla manifest ships these three, all "false").
inline constexpr char kFssTriggerCsiFullSync[] = "trigger-csi-fullsync";
inline constexpr char kFssPvToBackingDiskObjectIdMapping[] = "pv-to-backingdiskobjectid-mapping";
inline constexpr char kFssHighPvNodeDensity[] = "high-pv-node-density";

// Go's strconv.ParseBool; nullopt for anything else.
std::optional<bool> ParseGoBool(absl::string_view s);

// Whether `name` is on with ConfigMap data `data` (the rules above).
bool FeatureEnabled(const std::map<std::string, std::string>& data, absl::string_view name);

// One line per feature whose effective state differs between `before` and `after`, e.g.
// "high-pv-node-density: off -> on"; and "x: \"maybe\" is not a boolean (off)" for bad values.
std::vector<std::string> DescribeFeatureChange(const std::map<std::string, std::string>& before,
                                               const std::map<std::string, std::string>& after);

// The current ConfigMap data, shared by the services (thread-safe).
class FeatureStates {
 public:
  // Replaces the data; returns DescribeFeatureChange(old, new).
  std::vector<std::string> Replace(std::map<std::string, std::string> data)
      ABSL_LOCKS_EXCLUDED(mu_);
  bool Enabled(absl::string_view name) const ABSL_LOCKS_EXCLUDED(mu_);
  std::map<std::string, std::string> Data() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, std::string> data_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ccm::csi
