#include "csi/controller/volume_migrations.h"

#include "absl/strings/str_cat.h"
#include "kube/errors.h"
#include "kube/objects.h"

namespace ccm::csi {
namespace {

std::string SpecField(const kube::Json& obj, const char* field) {
  auto spec = obj.find("spec");
  if (spec == obj.end() || !spec->is_object()) return "";
  auto f = spec->find(field);
  return f != spec->end() && f->is_string() ? f->get<std::string>() : "";
}

}  // namespace

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
  if (old_obj != nullptr) by_path_.erase(SpecField(*old_obj, "volumepath"));
  if (obj != nullptr) {
    const std::string path = SpecField(*obj, "volumepath");
    const std::string id = SpecField(*obj, "volumeid");
    if (!path.empty() && !id.empty()) by_path_[path] = id;
  }
}

absl::StatusOr<std::string> KubeVolumeMigrations::VolumeIdOf(const std::string& volume_path) const {
  if (!informer_->HasSynced()) {
    return absl::UnavailableError(
        "the CnsVSphereVolumeMigration objects (in-tree volumes registered with CNS) are not "
        "listed yet");
  }
  absl::MutexLock l(&mu_);
  auto it = by_path_.find(volume_path);
  if (it == by_path_.end()) {
    return absl::NotFoundError(absl::StrCat("no CnsVSphereVolumeMigration for ", volume_path));
  }
  return it->second;
}

absl::Status KubeVolumeMigrations::Forget(const std::string& volume_id) {
  absl::Status s = client_.Delete(VolumeMigrationResource(), "", volume_id);
  return kube::IsNotFoundError(s) ? absl::OkStatus() : s;
}

}  // namespace ccm::csi
