#include "csi/core/types.h"

#include "absl/strings/str_cat.h"

namespace ccm::csi {

std::string AccessModeName(AccessMode mode) {
  switch (mode) {
    case AccessMode::kUnknown:
      return "UNKNOWN";
    case AccessMode::kSingleNodeWriter:
      return "SINGLE_NODE_WRITER";
    case AccessMode::kSingleNodeReaderOnly:
      return "SINGLE_NODE_READER_ONLY";
    case AccessMode::kMultiNodeReaderOnly:
      return "MULTI_NODE_READER_ONLY";
    case AccessMode::kMultiNodeSingleWriter:
      return "MULTI_NODE_SINGLE_WRITER";
    case AccessMode::kMultiNodeMultiWriter:
      return "MULTI_NODE_MULTI_WRITER";
    case AccessMode::kSingleNodeSingleWriter:
      return "SINGLE_NODE_SINGLE_WRITER";
    case AccessMode::kSingleNodeMultiWriter:
      return "SINGLE_NODE_MULTI_WRITER";
  }
  return absl::StrCat("mode ", static_cast<int>(mode));
}

}  // namespace ccm::csi
