#pragma once
// The fast path for the JSON a controller reads on its hot paths (watch events, the answers to its
// writes): simdjson (Debian's libsimdjson) validates and indexes the whole document at memory
// speed, then nlohmann values are built of the parts the reader keeps only. nlohmann's own
// lexer reads a byte at a time and was most of a Node controller's CPU.
//
// Every function returns nullopt when simdjson does not take the document: malformed JSON, a
// number simdjson does not represent (an integer beyond 64 bits), a document over
// kFastJsonMaxBytes. The caller then parses with nlohmann as before, so the results and the error
// messages are nlohmann's in every case; what simdjson takes, it builds exactly as nlohmann would
// (a non-negative integer is an unsigned number, the last of duplicate keys wins), but for "-0":
// nlohmann's signed 0, here an unsigned 0 (the same value and text).

#include <cstddef>
#include <optional>

#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace ccm::kube {

struct KeepRule;  // object_scan.h

// Bigger documents (a page of a list) go to nlohmann: each thread's parser keeps the buffers of
// the biggest document it has taken, about 7 bytes per byte of it (430 kB for 64 kB; 24 kB for a
// 6 kB Node event; a kubelet's Node with its images is 5-30 kB).
inline constexpr size_t kFastJsonMaxBytes = 64 * 1024;

// The whole document.
std::optional<nlohmann::json> FastParse(absl::string_view body);

// An object parsed under `rule`, with the same result as ParsePruned's nlohmann parse (including
// its stops: nothing after the `last` members). nullopt also when the document is not an object.
std::optional<nlohmann::json> FastParsePruned(absl::string_view body, const KeepRule& rule);

// {"metadata": {...}} with the string fields name, namespace, uid and resourceVersion of the
// top-level metadata object, as ScanMetadata; nullopt also when there is no such object.
std::optional<nlohmann::json> FastScanMetadata(absl::string_view body);

}  // namespace ccm::kube
