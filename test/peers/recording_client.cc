#include "peers/recording_client.h"

#include <set>

#include "kube/objects.h"

namespace ccm::peers {

std::vector<RecordingClient::Write> RecordingClient::writes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return writes_;
}

absl::StatusOr<kube::Json> RecordingClient::Keep(const char* verb, const kube::Resource& r,
                                                 std::string name, const kube::Json& sent,
                                                 absl::StatusOr<kube::Json> answer) {
  std::lock_guard<std::mutex> lock(mu_);
  writes_.push_back(
      {verb, r, std::move(name), sent, answer.ok() ? *answer : kube::Json(), answer.status()});
  return answer;
}

absl::StatusOr<kube::Json> RecordingClient::Create(const kube::Resource& r, absl::string_view ns,
                                                   const kube::Json& obj) {
  return Keep("create", r, kube::Name(obj), obj, real_.Create(r, ns, obj));
}

absl::StatusOr<kube::Json> RecordingClient::Update(const kube::Resource& r, const kube::Json& obj,
                                                   absl::string_view subresource) {
  return Keep("update", r, kube::Name(obj), obj, real_.Update(r, obj, subresource));
}

absl::StatusOr<kube::Json> RecordingClient::Patch(const kube::Resource& r, absl::string_view ns,
                                                  absl::string_view name, kube::PatchType type,
                                                  const kube::Json& patch,
                                                  absl::string_view subresource) {
  return Keep("patch", r, std::string(name), patch,
              real_.Patch(r, ns, name, type, patch, subresource));
}

absl::StatusOr<kube::Json> RecordingClient::CreateForIdentity(const kube::Resource& r,
                                                              absl::string_view ns,
                                                              const kube::Json& obj) {
  absl::StatusOr<kube::Json> full = Create(r, ns, obj);
  if (!full.ok()) return full;
  return kube::Json{{"metadata", (*full)["metadata"]}};
}

absl::StatusOr<kube::Json> RecordingClient::PatchForIdentity(
    const kube::Resource& r, absl::string_view ns, absl::string_view name, kube::PatchType type,
    const kube::Json& patch, absl::string_view subresource) {
  absl::StatusOr<kube::Json> full = Patch(r, ns, name, type, patch, subresource);
  if (!full.ok()) return full;
  return kube::Json{{"metadata", (*full)["metadata"]}};
}

bool ContainsAll(const kube::Json& stored, const kube::Json& sent, const std::string& path,
                 std::string* missing) {
  static const std::set<std::string> kServerOwned = {
      "/metadata/resourceVersion", "/metadata/uid", "/metadata/creationTimestamp",
      "/metadata/generation", "/metadata/managedFields"};
  if (kServerOwned.count(path)) return true;
  if (sent.is_object() && stored.is_object()) {
    for (const auto& [key, value] : sent.items()) {
      const std::string at = path + "/" + key;
      if (value.is_null()) {
        if (stored.contains(key) && !kServerOwned.count(at)) {
          *missing = at + " (removed, still there)";
          return false;
        }
        continue;
      }
      if (!stored.contains(key)) {
        if (kServerOwned.count(at)) continue;
        *missing = at + " (absent)";
        return false;
      }
      if (!ContainsAll(stored.at(key), value, at, missing)) return false;
    }
    return true;
  }
  if (stored != sent) {
    *missing = path + " (" + sent.dump() + " sent, " + stored.dump() + " stored)";
    return false;
  }
  return true;
}

}  // namespace ccm::peers
