#pragma once
// Streaming parse of a WaitForUpdatesEx answer: the bytes go in as they arrive (a SoapStreamSink
// for Client::CallStreaming) and each <objectSet> is handed on as an ObjectUpdate as soon as it
// closes, built in a small document of its own. Neither the answer's text nor a DOM of it ever
// exists whole: a full inventory load of 1,000 VMs (several MB of XML) needs one objectSet at a
// time.
//
// Accepted documents, as before: a SOAP envelope, a <WaitForUpdatesExResponse> element or a bare
// <returnval>. vim25 sends an UpdateSet's parts in schema order (version, filterSet*, truncated;
// in a filterSet: filter, objectSet*, missingSet*), so an objectSet is handed on with its
// filter; version and truncated are known at the end.
//
// Errors (the result of Feed or Finish; the parse stops at the first):
// - a SOAP <Fault>: its typed status (SoapFaultStatus), e.g. NotAuthenticated;
// - malformed or truncated XML, an UpdateSet without version, objectSet without kind or obj, an
//   unknown kind or op, no WaitForUpdatesExResponse: DataLoss "malformed WaitForUpdatesEx
//   response: ..." saying where;
// - an error returned by the handler, as is.
// After an error some objects may already have been handed on: consumers apply them where a
// failure loses nothing (InventoryCache::Load fills a map it commits at the end) or collect the
// answer first (UpdateSetCollector).

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "vsphere/soap.h"
#include "vsphere/update_set.h"
#include "vsphere/xml_stream.h"

namespace ccm::vsphere {

// Receives the parts of an answer in document order. An error stops the parse.
class UpdateHandler {
 public:
  virtual ~UpdateHandler() = default;
  // A filterSet begins (called before its objects, or at its end when it has none).
  virtual absl::Status OnFilterSet(const std::string& /*filter*/) { return absl::OkStatus(); }
  // One objectSet of the filterSet of `filter`; the update owns its values.
  virtual absl::Status OnObject(const std::string& filter, ObjectUpdate update) = 0;
  // One filter-level missingSet (an object the filter could not read).
  virtual absl::Status OnMissingObject(const std::string& /*filter*/, MissingObject /*missing*/) {
    return absl::OkStatus();
  }
};

class UpdateStreamParser final : public SoapStreamSink, private XmlHandler {
 public:
  // `handler` must outlive the parser.
  explicit UpdateStreamParser(UpdateHandler& handler);

  // SoapStreamSink. Reset() forgets the document (not the handler's state: the Client resets
  // only while emitted() is false, so the handler has seen nothing).
  void Reset() override;
  absl::Status Feed(absl::string_view bytes) override;
  absl::Status Finish() override;
  bool emitted() const override { return emitted_; }

  // After a successful Finish(). has_updates is false when the answer had no UpdateSet
  // (maxWaitSeconds passed without a change): keep the version and ask again.
  bool has_updates() const { return has_updates_; }
  const std::string& version() const { return version_; }
  bool truncated() const { return truncated_; }

 private:
  // What an open element is to the parser.
  enum class Role { kOuter, kResponse, kReturnval, kFilterSet, kSkip };
  // Elements rebuilt whole (DomBuilder) and read with the DOM code when they close.
  enum class Capture { kNone, kVersion, kTruncated, kFilter, kObjectSet, kMissingSet, kFault };

  absl::Status StartElement(const char* name, const char* const* attrs) override;
  absl::Status EndElement() override;
  absl::Status Text(absl::string_view text) override;
  absl::Status Captured();
  absl::Status EndRole(Role role);
  absl::Status AnnounceFilterSet();
  absl::Status Malformed(absl::string_view what) const;

  UpdateHandler& handler_;
  XmlStream xml_;
  std::vector<Role> open_;  // roles of the open elements outside a capture
  Capture capture_ = Capture::kNone;
  DomBuilder dom_;
  bool emitted_ = false;
  bool seen_response_ = false, seen_returnval_ = false, seen_version_ = false;
  bool has_updates_ = false, truncated_ = false;
  std::string version_;
  // The current filterSet.
  std::string filter_;
  bool seen_filter_ = false, announced_ = false;
};

// Collects a whole answer, for callers that must not apply any of it before it is known complete
// (the incremental stream: its answers are small).
class UpdateSetCollector final : public UpdateHandler {
 public:
  absl::Status OnFilterSet(const std::string& filter) override;
  absl::Status OnObject(const std::string& filter, ObjectUpdate update) override;
  absl::Status OnMissingObject(const std::string& filter, MissingObject missing) override;
  // The collected answer with version and truncated from `parser`; after a successful Finish().
  UpdateSet Take(const UpdateStreamParser& parser);

 private:
  UpdateSet set_;
};

// Parses a whole WaitForUpdatesEx answer held in memory (small answers, tests): a whole SOAP
// envelope, a <WaitForUpdatesExResponse> element or a bare <returnval>, with the streaming
// parser. Malformed or truncated XML, missing required fields or unknown enum values are DataLoss
// errors saying where; a SOAP fault is its typed status (SoapFaultStatus).
absl::StatusOr<UpdateSet> ParseUpdateSet(absl::string_view xml);

}  // namespace ccm::vsphere
