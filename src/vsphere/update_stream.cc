#include "vsphere/update_stream.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace ccm::vsphere {

UpdateStreamParser::UpdateStreamParser(UpdateHandler& handler)
    : handler_(handler), xml_(*this, "malformed WaitForUpdatesEx response") {}

void UpdateStreamParser::Reset() {
  xml_.Reset();
  open_.clear();
  capture_ = Capture::kNone;
  dom_ = DomBuilder();
  emitted_ = seen_response_ = seen_returnval_ = seen_version_ = false;
  has_updates_ = truncated_ = false;
  version_.clear();
  filter_.clear();
  seen_filter_ = announced_ = false;
}

absl::Status UpdateStreamParser::Feed(absl::string_view bytes) { return xml_.Feed(bytes); }

absl::Status UpdateStreamParser::Finish() {
  CCM_RETURN_IF_ERROR(xml_.Finish());
  if (!seen_response_ && !seen_returnval_) return Malformed("no WaitForUpdatesExResponse element");
  return absl::OkStatus();
}

absl::Status UpdateStreamParser::Malformed(absl::string_view what) const {
  return absl::DataLossError(
      absl::StrCat("malformed WaitForUpdatesEx response: ", what, " (at ", xml_.Where(), ")"));
}

absl::Status UpdateStreamParser::StartElement(const char* name, const char* const* attrs) {
  if (capture_ != Capture::kNone) {
    dom_.Start(name, attrs);
    return absl::OkStatus();
  }
  const absl::string_view local = LocalName(name);
  const bool root = open_.empty();
  Role role = Role::kSkip;
  Capture capture = Capture::kNone;
  // The same leniency as the DOM parser had: any wrapper around the response (Envelope, Body),
  // the first WaitForUpdatesExResponse and its first returnval; unknown elements inside are
  // skipped.
  switch (root ? Role::kOuter : open_.back()) {
    case Role::kOuter:
      if (local == "Fault") {
        capture = Capture::kFault;
      } else if (local == "WaitForUpdatesExResponse" && !seen_response_) {
        role = Role::kResponse;
        seen_response_ = true;
      } else if (root && local == "returnval") {
        role = Role::kReturnval;
      } else {
        role = Role::kOuter;
      }
      break;
    case Role::kResponse:
      if (local == "returnval" && !seen_returnval_) role = Role::kReturnval;
      break;
    case Role::kReturnval:
      if (local == "version") {
        capture = Capture::kVersion;
      } else if (local == "truncated") {
        capture = Capture::kTruncated;
      } else if (local == "filterSet") {
        role = Role::kFilterSet;
        filter_.clear();
        seen_filter_ = announced_ = false;
      }
      break;
    case Role::kFilterSet:
      if (local == "filter") {
        capture = Capture::kFilter;
      } else if (local == "objectSet") {
        capture = Capture::kObjectSet;
      } else if (local == "missingSet") {
        capture = Capture::kMissingSet;
      }
      break;
    case Role::kSkip:
      break;
  }
  if (role == Role::kReturnval) seen_returnval_ = has_updates_ = true;
  if (capture != Capture::kNone) {
    capture_ = capture;
    dom_.Start(name, attrs);
  } else {
    open_.push_back(role);
  }
  return absl::OkStatus();
}

absl::Status UpdateStreamParser::Text(absl::string_view text) {
  if (capture_ != Capture::kNone) dom_.Text(text);
  return absl::OkStatus();
}

absl::Status UpdateStreamParser::EndElement() {
  if (capture_ != Capture::kNone) return dom_.End() ? Captured() : absl::OkStatus();
  Role role = open_.back();  // expat checks that elements nest
  open_.pop_back();
  return EndRole(role);
}

absl::Status UpdateStreamParser::EndRole(Role role) {
  if (role == Role::kReturnval && !seen_version_) return Malformed("UpdateSet without version");
  if (role == Role::kFilterSet) return AnnounceFilterSet();  // an empty filterSet still counts
  return absl::OkStatus();
}

absl::Status UpdateStreamParser::AnnounceFilterSet() {
  if (announced_) return absl::OkStatus();
  announced_ = emitted_ = true;
  return handler_.OnFilterSet(filter_);
}

absl::Status UpdateStreamParser::Captured() {
  const Capture what = std::exchange(capture_, Capture::kNone);
  std::shared_ptr<pugi::xml_document> doc = dom_.Take();
  const pugi::xml_node n = doc->document_element();
  switch (what) {
    case Capture::kVersion:
      if (!seen_version_) version_ = n.text().get();
      seen_version_ = true;
      break;
    case Capture::kTruncated:
      truncated_ = absl::string_view(n.text().get()) == "true";
      break;
    case Capture::kFilter:
      if (!seen_filter_) filter_ = n.text().get();
      seen_filter_ = true;
      break;
    case Capture::kObjectSet: {
      absl::StatusOr<ObjectUpdate> u = DecodeObjectSet(std::move(doc));
      if (!u.ok()) {
        return absl::Status(
            u.status().code(),
            absl::StrCat(u.status().message(), " (objectSet ending at ", xml_.Where(), ")"));
      }
      CCM_RETURN_IF_ERROR(AnnounceFilterSet());
      return handler_.OnObject(filter_, *std::move(u));
    }
    case Capture::kMissingSet:
      CCM_RETURN_IF_ERROR(AnnounceFilterSet());
      return handler_.OnMissingObject(filter_, DecodeMissingObject(n));
    case Capture::kFault:
      return SoapFaultStatus(n);
    case Capture::kNone:
      break;
  }
  return absl::OkStatus();
}

absl::Status UpdateSetCollector::OnFilterSet(const std::string& filter) {
  set_.filters.push_back(FilterUpdate{filter, {}, {}});
  return absl::OkStatus();
}

absl::Status UpdateSetCollector::OnObject(const std::string& filter, ObjectUpdate update) {
  if (set_.filters.empty()) set_.filters.push_back(FilterUpdate{filter, {}, {}});
  set_.filters.back().objects.push_back(std::move(update));
  return absl::OkStatus();
}

absl::Status UpdateSetCollector::OnMissingObject(const std::string& filter, MissingObject missing) {
  if (set_.filters.empty()) set_.filters.push_back(FilterUpdate{filter, {}, {}});
  set_.filters.back().missing_objects.push_back(std::move(missing));
  return absl::OkStatus();
}

UpdateSet UpdateSetCollector::Take(const UpdateStreamParser& parser) {
  UpdateSet out = std::exchange(set_, UpdateSet{});
  out.has_updates = parser.has_updates();
  out.version = parser.version();
  out.truncated = parser.truncated();
  return out;
}

absl::StatusOr<UpdateSet> ParseUpdateSet(absl::string_view xml) {
  UpdateSetCollector collector;
  UpdateStreamParser parser(collector);
  CCM_RETURN_IF_ERROR(parser.Feed(xml));
  CCM_RETURN_IF_ERROR(parser.Finish());
  return collector.Take(parser);
}

}  // namespace ccm::vsphere
