#pragma once
// Push parsing of XML that arrives in pieces (an HTTP body), on expat: bytes go in, element events
// come out, so a big answer never has to be held whole. DomBuilder turns the events of one small
// element back into a pugixml document for the code that reads DOM nodes.
//
// Names are passed as written, prefix included ("soapenv:Body", "xsi:type"): vim25 readers match
// local names (LocalName), as they do on pugixml documents. A DOCTYPE is refused (SOAP has none,
// and it is the door to entity expansion attacks).
// Not thread-safe; one document at a time.

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "pugixml.hpp"

struct XML_ParserStruct;  // expat

namespace ccm::vsphere {

// Receives the events of one document. An error stops the parse and is what Feed/Finish return.
class XmlHandler {
 public:
  virtual ~XmlHandler() = default;
  // `attrs` is expat's array: name, value, name, value, ..., nullptr.
  virtual absl::Status StartElement(const char* name, const char* const* attrs) = 0;
  virtual absl::Status EndElement() = 0;
  // Character data with entities decoded; one text may come in several calls.
  virtual absl::Status Text(absl::string_view text) = 0;
};

class XmlStream {
 public:
  // Syntax errors come back as DataLoss "<context>: XML error at line L, column C (byte B):
  // <reason>", e.g. context "malformed WaitForUpdatesEx response".
  XmlStream(XmlHandler& handler, std::string context);
  ~XmlStream();
  XmlStream(const XmlStream&) = delete;
  XmlStream& operator=(const XmlStream&) = delete;

  // Parses the next piece. After an error every later call returns that error.
  absl::Status Feed(absl::string_view bytes);
  // End of input: an unfinished document (truncated answer) is an error.
  absl::Status Finish();
  // Forgets the current document; the next Feed starts a new one.
  void Reset();
  // "line L, column C (byte B)" of the event being handled (for handlers' error messages).
  std::string Where() const;

 private:
  absl::Status Parse(const char* data, int size, bool final);
  static void OnStart(void* self, const char* name, const char** attrs);
  static void OnEnd(void* self, const char* name);
  static void OnText(void* self, const char* s, int len);
  static void OnDoctype(void* self, const char* name, const char* sysid, const char* pubid,
                        int has_internal_subset);
  void Fail(absl::Status s);

  XmlHandler& handler_;
  const std::string context_;
  XML_ParserStruct* parser_ = nullptr;
  absl::Status error_;  // sticky: the first error of this document
};

// Rebuilds one element and its subtree as a pugixml document from XmlHandler events: elements,
// attributes and text as pugixml's default parse would keep them (whitespace-only text dropped),
// except that CDATA sections become plain text (same text() for readers).
class DomBuilder {
 public:
  // Whether an element is being built (between its Start and its matching End).
  bool active() const { return depth_ > 0; }
  // The first Start begins a new document with this element as its root.
  void Start(const char* name, const char* const* attrs);
  void Text(absl::string_view text);
  // Returns true when this End closed the root: the document is then ready for Take().
  bool End();
  // The finished document; the builder is empty again.
  std::shared_ptr<pugi::xml_document> Take();

 private:
  void FlushText();

  std::shared_ptr<pugi::xml_document> doc_;
  pugi::xml_node current_;
  int depth_ = 0;
  std::string text_;  // pending character data of `current_` (expat splits it)
};

}  // namespace ccm::vsphere
