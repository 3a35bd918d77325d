#pragma once
// The JSON patch (RFC 6902) that writes a controller's change to a Node without losing to other
// writers of unrelated fields: labels and annotations are written key by key, so a kubelet or an
// operator labelling the Node at the same moment neither conflicts with us nor is overwritten.
// Every value we replace or remove is guarded by a "test" of the value we computed from, so a
// concurrent change to that same value fails the patch (HTTP 422) instead of being lost; the
// caller then reads the Node again. spec.taints has no merge key in the Node schema, so it is
// written whole behind a test of the list we read (as client-go's PatchNodeTaints guards taints
// with the resourceVersion, but without conflicting on labels). A change anywhere else, or to a
// field whose parent map is absent, is guarded by a test of metadata.resourceVersion: the same
// guarantee as a PUT.
//
// RFC 6902 cannot test for absence. A label we add that is not one of the six zone, region and
// instance-type labels (the provider's truth, which the reference overwrites too) must never
// overwrite another writer's (additional and extra labels): adding one tests the whole label map
// as read, so a label written meanwhile fails the patch and the caller reads the Node again.
// Not guarded: a zone, region or instance-type label, or an annotation key, that both we and
// another writer add at the same moment; the later write wins, as with a strategic merge patch.

#include "nlohmann/json.hpp"

namespace ccm::controllers {

// The operations turning `before` (the Node as read) into `after` (the Node as the controller
// wants it); an empty array when they are equal.
nlohmann::json NodeJsonPatch(const nlohmann::json& before, const nlohmann::json& after);

// Whether every "test" operation of `patch` holds on `node`: false means a failed patch met a
// concurrent change (read again and recompute), true that it failed for another reason.
bool PatchTestsHold(const nlohmann::json& patch, const nlohmann::json& node);

}  // namespace ccm::controllers
