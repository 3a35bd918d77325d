#include "csi/migration/volume_migrations.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "csi/migration/intree.h"
#include "kube/errors.h"
#include "kube/objects.h"

namespace ccm::csi {
namespace {

const kube::Json* Spec(const kube::Json& obj) {
  auto spec = obj.find("spec");
  return spec != obj.end() && spec->is_object() ? &*spec : nullptr;
}

std::string SpecString(const kube::Json& obj, const char* field) {
  const kube::Json* spec = Spec(obj);
  if (spec == nullptr) return "";
  auto f = spec->find(field);
  return f != spec->end() && f->is_string() ? f->get<std::string>() : "";
}

bool SpecBool(const kube::Json& obj, const char* field) {
  const kube::Json* spec = Spec(obj);
  if (spec == nullptr) return false;
  auto f = spec->find(field);
  return f != spec->end() && f->is_boolean() && f->get<bool>();
}

}  // namespace

absl::StatusOr<std::string> VolumeMigrations::VolumeIdOf(const std::string& volume_path) const {
  absl::StatusOr<InTreeVolume> v = Find(volume_path);
  if (!v.ok()) return v.status();
  return v->volume_id;
}

absl::StatusOr<kube::ObjectReference> FindInTreePv(kube::Client& client,
                                                   const std::string& volume_path) {
  std::optional<kube::ObjectReference> found;
  kube::ListOptions o;
  o.limit = 500;
  absl::StatusOr<kube::ListResult> listed =
      client.ListAll(kube::PersistentVolumes(), "", o, [&](kube::Json& pv) {
        if (!found.has_value() && InTreeVolumePath(pv) == volume_path) {
          const kube::Json& m = pv["metadata"];
          found = kube::ObjectReference{
              "PersistentVolume", "", m.value("name", ""), m.value("uid", ""), "v1", "", ""};
        }
        pv = kube::Json();  // nothing kept
      });
  if (!listed.ok()) {
    return Annotate(listed.status(), absl::StrCat("find the PersistentVolume of ", volume_path));
  }
  if (!found.has_value()) {
    return absl::NotFoundError(absl::StrCat("no PersistentVolume names ", volume_path));
  }
  return *found;
}

const kube::Resource& VolumeMigrationResource() {
  static const kube::Resource* const r =
      new kube::Resource{"cns.vmware.com", "v1alpha1", "cnsvspherevolumemigrations",
                         "CnsVSphereVolumeMigration", false};
  return *r;
}

KubeVolumeMigrations::KubeVolumeMigrations(kube::Client& client) : client_(client) {
  informer_ =
      std::make_unique<kube::Informer>(client, VolumeMigrationResource(), kube::InformerOptions{});
  informer_->AddEventHandler(
      {[this](const kube::Json& o) { Apply(nullptr, &o); },
       [this](const kube::Json& old_obj, const kube::Json& o) { Apply(&old_obj, &o); },
       [this](const kube::Json& o) { Apply(&o, nullptr); }});
}

void KubeVolumeMigrations::Start() { informer_->Start(); }
void KubeVolumeMigrations::Stop() { informer_->Stop(); }

void KubeVolumeMigrations::Apply(const kube::Json* old_obj, const kube::Json* obj) {
  absl::MutexLock l(&mu_);
  if (old_obj != nullptr) {
    // Only the old object's own entry: a late event of a deleted object must not erase a newer
    // registration of the same path (saved before this event arrived).
    auto it = by_path_.find(SpecString(*old_obj, "volumepath"));
    if (it != by_path_.end() && it->second.volume_id == SpecString(*old_obj, "volumeid")) {
      by_path_.erase(it);
    }
  }
  if (obj != nullptr) {
    InTreeVolume v{SpecString(*obj, "volumepath"), SpecString(*obj, "volumeid"),
                   SpecBool(*obj, "protectvolumefromvmdelete")};
    if (!v.volume_path.empty() && !v.volume_id.empty()) by_path_[v.volume_path] = v;
  }
}

namespace {
absl::Status NotListedYet() {
  return absl::UnavailableError(
      "the CnsVSphereVolumeMigration objects (in-tree volumes registered with CNS) are not "
      "listed yet");
}
}  // namespace

absl::StatusOr<std::map<std::string, std::string>> KubeVolumeMigrations::PathsByVolumeId() const {
  if (!informer_->HasSynced()) return NotListedYet();
  std::map<std::string, std::string> out;
  absl::MutexLock l(&mu_);
  for (const auto& [path, v] : by_path_) out[v.volume_id] = path;
  return out;
}

absl::StatusOr<InTreeVolume> KubeVolumeMigrations::Find(const std::string& volume_path) const {
  if (!informer_->HasSynced()) return NotListedYet();
  absl::MutexLock l(&mu_);
  auto it = by_path_.find(volume_path);
  if (it == by_path_.end()) {
    return absl::NotFoundError(absl::StrCat("no CnsVSphereVolumeMigration for ", volume_path));
  }
  return it->second;
}

absl::Status KubeVolumeMigrations::Save(const InTreeVolume& v) {
  kube::Json obj = {{"apiVersion", "cns.vmware.com/v1alpha1"},
                    {"kind", "CnsVSphereVolumeMigration"},
                    {"metadata", {{"name", v.volume_id}}},
                    {"spec",
                     {{"volumepath", v.volume_path},
                      {"volumeid", v.volume_id},
                      {"protectvolumefromvmdelete", v.protected_from_vm_delete}}}};
  absl::StatusOr<kube::Json> r = client_.CreateForIdentity(VolumeMigrationResource(), "", obj);
  if (r.ok() || kube::IsAlreadyExistsError(r.status())) {
    Apply(nullptr, &obj);  // known at once, before the informer's event
    return absl::OkStatus();
  }
  return Annotate(r.status(), absl::StrCat("save CnsVSphereVolumeMigration ", v.volume_id));
}

absl::Status KubeVolumeMigrations::MarkProtected(const std::string& volume_id) {
  const kube::Json patch = {{"spec", {{"protectvolumefromvmdelete", true}}}};
  absl::StatusOr<kube::Json> r = client_.PatchForIdentity(VolumeMigrationResource(), "", volume_id,
                                                          kube::PatchType::kMerge, patch);
  if (!r.ok()) {
    return Annotate(r.status(), absl::StrCat("mark CnsVSphereVolumeMigration ", volume_id,
                                             " protected from VM deletion"));
  }
  absl::MutexLock l(&mu_);
  for (auto& [path, v] : by_path_) {
    if (v.volume_id == volume_id) v.protected_from_vm_delete = true;
  }
  return absl::OkStatus();
}

absl::Status KubeVolumeMigrations::Forget(const std::string& volume_id) {
  absl::Status s = client_.Delete(VolumeMigrationResource(), "", volume_id);
  if (!s.ok() && !kube::IsNotFoundError(s)) return s;
  absl::MutexLock l(&mu_);
  std::erase_if(by_path_, [&](const auto& e) { return e.second.volume_id == volume_id; });
  return absl::OkStatus();
}

}  // namespace ccm::csi
