#pragma once
// Where vCenter credentials come from. The vSphere layer never reads Secrets or files itself: the
// app implements this on top of a Secret informer / secrets-directory watcher (see
// cloud/config/credentials.h) and the session asks it before every login.

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/secret.h"

namespace ccm::vsphere {

struct Credentials {
  std::string username;
  Secret password;
  bool operator==(const Credentials& o) const {
    return username == o.username && password == o.password;
  }
};

class CredentialSource {
 public:
  virtual ~CredentialSource() = default;
  // Current credentials for the vCenter `server` (the configured address). NotFound /
  // Unavailable when none are known yet: the session must not log in with empty credentials.
  virtual absl::StatusOr<Credentials> Get(absl::string_view server) const = 0;
  // Increases whenever credentials for any server change; sessions compare it to decide to
  // log in again with the new values.
  virtual uint64_t generation() const = 0;
  // Calls `on_change` (on any thread, after generation() grew) whenever credentials change, so a
  // long wait on the old session can end now. Returns a handle for Unsubscribe, after which no
  // call is under way or to come; sources that never change may keep these no-ops.
  virtual int Subscribe(std::function<void()> on_change) { return 0; }
  virtual void Unsubscribe(int handle) {}
};

}  // namespace ccm::vsphere
