#pragma once
// Test-only: ways to cut a document into the pieces a network read may deliver, so streaming
// parsers are checked on every split (whole, byte by byte, random cuts with fixed seeds).

#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace ccm::vsphere {

struct Chunking {
  enum Kind { kWhole, kBytes, kRandom } kind = kWhole;
  unsigned seed = 0;  // kRandom
  std::string name() const {
    switch (kind) {
      case kWhole:
        return "Whole";
      case kBytes:
        return "ByteByByte";
      case kRandom:
        return absl::StrCat("Random", seed);
    }
    return "?";
  }
};

inline std::vector<Chunking> AllChunkings() {
  std::vector<Chunking> out = {{Chunking::kWhole}, {Chunking::kBytes}};
  for (unsigned seed = 1; seed <= 8; ++seed) out.push_back({Chunking::kRandom, seed});
  return out;
}

inline std::vector<absl::string_view> Split(absl::string_view s, const Chunking& c) {
  std::vector<absl::string_view> out;
  std::mt19937 rng(c.seed);
  std::uniform_int_distribution<size_t> len(1, 97);
  while (!s.empty()) {
    size_t n = c.kind == Chunking::kWhole ? s.size() : c.kind == Chunking::kBytes ? 1 : len(rng);
    n = std::min(n, s.size());
    out.push_back(s.substr(0, n));
    s.remove_prefix(n);
  }
  return out;
}

}  // namespace ccm::vsphere
