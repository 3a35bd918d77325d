#pragma once
// PropertyCollector access: RetrievePropertiesEx with paging (ContinueRetrievePropertiesEx follows
// the token), container views, traversal specs. Results keep their XML document alive, so
// property values are plain pugi nodes that parsers (vm_facts.h) read directly.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/notification.h"
#include "pugixml.hpp"
#include "vsphere/client.h"
#include "vsphere/moref.h"

namespace ccm::vsphere {

struct PropertySpec {
  std::string type;  // "VirtualMachine"; a base type ("ManagedEntity") matches subtypes
  std::vector<std::string> paths;  // "name", "config.uuid", ...
  bool all = false;
};

// A TraversalSpec; `select` names other TraversalSpecs (defined anywhere in the same ObjectSpec)
// to follow from the objects this one reaches, e.g. for recursion.
struct TraversalSpec {
  std::string name;
  std::string type;  // managed object type this spec applies to, e.g. "Folder"
  std::string path;  // property to follow, e.g. "childEntity"
  bool skip = false;
  std::vector<std::string> select;
};

struct ObjectSpec {
  Moref obj;
  bool skip = false;
  std::vector<TraversalSpec> select_set;
};

struct PropertyFilterSpec {
  std::vector<PropertySpec> prop_set;
  std::vector<ObjectSpec> object_set;
};

// <{tag}>...</{tag}> XML for a PropertyFilterSpec (element order as vim25 requires).
std::string PropertyFilterSpecXml(const PropertyFilterSpec& spec,
                                  absl::string_view tag = "specSet");

struct PropertyValue {
  std::string path;
  pugi::xml_node val;  // the <val> element (xsi:type tells its type)
};

// A property that could not be read (missingSet), e.g. NoPermission.
struct PropertyError {
  std::string path;
  std::string fault;  // xsi:type of the fault
  std::string message;
};

struct ObjectContent {
  Moref obj;
  std::vector<PropertyValue> props;
  std::vector<PropertyError> missing;
  std::shared_ptr<const pugi::xml_document> doc;  // owns every val

  // The <val> of `path`, or an empty node.
  pugi::xml_node Get(absl::string_view path) const;
  // Text of a simple-typed property ("" if absent).
  std::string GetText(absl::string_view path) const;
  // A ManagedObjectReference-typed property (empty if absent).
  Moref GetMoref(absl::string_view path) const;
};

// One page of a RetrieveResult (pure; used for both RetrievePropertiesEx and
// ContinueRetrievePropertiesEx answers). `returnval` may be empty (no objects).
struct RetrievePage {
  std::string token;  // non-empty: more pages follow
  std::vector<ObjectContent> objects;
};
RetrievePage ParseRetrieveResult(std::shared_ptr<const pugi::xml_document> doc,
                                 const pugi::xml_node& returnval);

struct RetrieveOptions {
  int max_objects = 0;  // page size hint (RetrieveOptions.maxObjects); 0 = server default
};

// RetrievePropertiesEx + ContinueRetrievePropertiesEx until the token is exhausted.
absl::StatusOr<std::vector<ObjectContent>> RetrieveProperties(Client& client,
                                                              const PropertyFilterSpec& spec,
                                                              RetrieveOptions options = {});

// ViewManager.CreateContainerView / View.DestroyView.
absl::StatusOr<Moref> CreateContainerView(Client& client, const Moref& container,
                                          const std::vector<std::string>& types, bool recursive);
absl::Status DestroyView(Client& client, const Moref& view);

// Every object of `type` below `container` (default: the root folder), through a temporary
// container view, with `paths`. One paged RetrievePropertiesEx (+ view create/destroy).
absl::StatusOr<std::vector<ObjectContent>> RetrieveAllOfType(Client& client,
                                                             const std::string& type,
                                                             const std::vector<std::string>& paths,
                                                             RetrieveOptions options = {},
                                                             Moref container = {});

// Properties of the given objects (all of one or several types). Objects that vanished are
// reported as ManagedObjectNotFound by vCenter: they are dropped and listed in `not_found`
// (the call is repeated without them).
struct RetrieveObjectsResult {
  std::vector<ObjectContent> objects;
  std::vector<Moref> not_found;
};
absl::StatusOr<RetrieveObjectsResult> RetrieveObjects(Client& client,
                                                      const std::vector<Moref>& objs,
                                                      const std::vector<PropertySpec>& props,
                                                      RetrieveOptions options = {});

// WaitForUpdatesEx maxWaitSeconds of the long-lived streams (inventory caches, change watchers):
// an idle stream costs one request per this time (issue 25: idle vCenter load). A restarted
// vCenter or a refused connection ends the wait at once; a silent fault (a blackholed network) is
// noticed after this plus the stream's margin. Stop() does not wait for it (CancelWaitForUpdates).
inline constexpr int kStreamMaxWaitSeconds = 120;

// The arguments of PropertyCollector.WaitForUpdatesEx: `version` "" for the current state,
// `max_wait_seconds` 0 for no maxWaitSeconds (no options).
std::string WaitForUpdatesExArgs(const Moref& collector, const std::string& version,
                                 int max_wait_seconds);

// Stops a stream thread that may be inside a long WaitForUpdatesEx: CancelWaitForUpdates on the
// collector `waiting()` names (none when empty), again every `every`, until `exited` is notified.
// One cancel is not enough: when it reaches vCenter just before the thread's next wait, that wait
// would run for its whole maxWaitSeconds (minutes).
void CancelWaitsUntilExited(Client& client, const std::function<Moref()>& waiting,
                            const absl::Notification& exited, absl::string_view log_name,
                            absl::Duration every = absl::Milliseconds(500));

}  // namespace ccm::vsphere
