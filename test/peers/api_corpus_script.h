#pragma once
// The requests of the API corpus (fixtures/kube_emulator/api_corpus.h): the sequences our
// binaries send, case by case, without answers. The peers suite records kube-apiserver's answers
// to them into test/fixtures/kube_emulator/testdata/api_corpus.jsonl, and checks that the
// committed file was recorded from exactly these requests.

#include <vector>

#include "absl/status/statusor.h"
#include "fixtures/kube_emulator/api_corpus.h"

namespace ccm::peers {

// `crds`: the CSI driver's CRDs (deploy/csi/kustomize/base/crds.yaml) as JSON objects.
std::vector<::ccm::testing::CorpusCase> ApiCorpusScript(const std::vector<nlohmann::json>& crds);

}  // namespace ccm::peers
