#pragma once
// A kube::Client for the peers suite that forwards every call to a real client and keeps each
// write (Create, Update, Patch and their ForIdentity forms): what was sent and what the server
// answered it stored, so a test can check that nothing it sent was pruned or changed.

#include <mutex>
#include <string>
#include <vector>

#include "kube/client.h"

namespace ccm::peers {

class RecordingClient final : public kube::Client {
 public:
  struct Write {
    std::string verb;  // "create", "update", "patch"
    kube::Resource resource;
    std::string name;
    kube::Json sent;    // the object, or the patch
    kube::Json stored;  // the server's answer (the object as stored)
    absl::Status status;
  };
  explicit RecordingClient(kube::Client& real) : real_(real) {}
  std::vector<Write> writes() const;

  absl::StatusOr<kube::Json> Get(const kube::Resource& r, absl::string_view ns,
                                 absl::string_view name) override {
    return real_.Get(r, ns, name);
  }
  absl::StatusOr<kube::ListResult> List(const kube::Resource& r, absl::string_view ns,
                                        const kube::ListOptions& opts) override {
    return real_.List(r, ns, opts);
  }
  absl::Status Watch(const kube::Resource& r, absl::string_view ns, const kube::WatchOptions& opts,
                     const std::function<bool(kube::WatchEvent&)>& on_event,
                     const std::atomic<bool>* cancel) override {
    return real_.Watch(r, ns, opts, on_event, cancel);
  }
  absl::Status Delete(const kube::Resource& r, absl::string_view ns, absl::string_view name,
                      const kube::DeleteOptions& opts) override {
    return real_.Delete(r, ns, name, opts);
  }
  absl::StatusOr<kube::Json> Create(const kube::Resource& r, absl::string_view ns,
                                    const kube::Json& obj) override;
  absl::StatusOr<kube::Json> Update(const kube::Resource& r, const kube::Json& obj,
                                    absl::string_view subresource) override;
  absl::StatusOr<kube::Json> Patch(const kube::Resource& r, absl::string_view ns,
                                   absl::string_view name, kube::PatchType type,
                                   const kube::Json& patch, absl::string_view subresource) override;
  // The identity forms write the same (and keep the whole answer).
  absl::StatusOr<kube::Json> CreateForIdentity(const kube::Resource& r, absl::string_view ns,
                                               const kube::Json& obj) override;
  absl::StatusOr<kube::Json> PatchForIdentity(const kube::Resource& r, absl::string_view ns,
                                              absl::string_view name, kube::PatchType type,
                                              const kube::Json& patch,
                                              absl::string_view subresource) override;
  absl::StatusOr<kube::Json> PatchWithoutStatus(const kube::Resource& r, absl::string_view ns,
                                                absl::string_view name, kube::PatchType type,
                                                const kube::Json& patch,
                                                absl::string_view subresource) override {
    return Patch(r, ns, name, type, patch, subresource);
  }
  std::string DefaultNamespace() const override { return real_.DefaultNamespace(); }

 private:
  absl::StatusOr<kube::Json> Keep(const char* verb, const kube::Resource& r, std::string name,
                                  const kube::Json& sent, absl::StatusOr<kube::Json> answer);
  kube::Client& real_;
  mutable std::mutex mu_;
  std::vector<Write> writes_;
};

// Whether every member of `sent` is in `stored` with the same value (objects member by member,
// arrays and scalars whole). Server-owned metadata (resourceVersion, uid, creationTimestamp,
// generation, managedFields) is not compared; a null in `sent` (a merge patch's removal) must be
// absent in `stored`. *missing names the first difference.
bool ContainsAll(const kube::Json& stored, const kube::Json& sent, const std::string& path,
                 std::string* missing);

}  // namespace ccm::peers
