#include "vsphere/xml_stream.h"

#include <expat.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace ccm::vsphere {

XmlStream::XmlStream(XmlHandler& handler, std::string context)
    : handler_(handler), context_(std::move(context)) {
  Reset();
}

XmlStream::~XmlStream() {
  if (parser_ != nullptr) XML_ParserFree(parser_);
}

void XmlStream::Reset() {
  // A fresh parser rather than XML_ParserReset: that also clears the handlers and user data.
  if (parser_ != nullptr) XML_ParserFree(parser_);
  error_ = absl::OkStatus();
  parser_ = XML_ParserCreate(nullptr);
  if (parser_ == nullptr) {
    error_ = absl::ResourceExhaustedError(absl::StrCat(context_, ": cannot create an XML parser"));
    return;
  }
  XML_SetUserData(parser_, this);
  XML_SetElementHandler(parser_, &XmlStream::OnStart, &XmlStream::OnEnd);
  XML_SetCharacterDataHandler(parser_, &XmlStream::OnText);
  XML_SetStartDoctypeDeclHandler(parser_, &XmlStream::OnDoctype);
}

absl::Status XmlStream::Feed(absl::string_view bytes) {
  // XML_Parse takes an int length.
  constexpr size_t kMaxPiece = size_t{1} << 30;
  do {
    size_t n = std::min(bytes.size(), kMaxPiece);
    absl::Status s = Parse(bytes.data(), static_cast<int>(n), false);
    if (!s.ok()) return s;
    bytes.remove_prefix(n);
  } while (!bytes.empty());
  return absl::OkStatus();
}

absl::Status XmlStream::Finish() { return Parse(nullptr, 0, true); }

absl::Status XmlStream::Parse(const char* data, int size, bool final) {
  if (!error_.ok()) return error_;
  if (XML_Parse(parser_, data, size, final ? XML_TRUE : XML_FALSE) == XML_STATUS_ERROR &&
      error_.ok()) {
    error_ = absl::DataLossError(absl::StrCat(context_, ": XML error at ", Where(), ": ",
                                              XML_ErrorString(XML_GetErrorCode(parser_))));
  }
  return error_;
}

std::string XmlStream::Where() const {
  if (parser_ == nullptr) return "start";
  return absl::StrCat("line ", XML_GetCurrentLineNumber(parser_), ", column ",
                      XML_GetCurrentColumnNumber(parser_) + 1, " (byte ",
                      XML_GetCurrentByteIndex(parser_), ")");
}

void XmlStream::Fail(absl::Status s) {
  if (!error_.ok() || s.ok()) return;
  error_ = std::move(s);
  XML_StopParser(parser_, XML_FALSE);
}

// Expat may still deliver an event or two after XML_StopParser: each callback checks error_.
void XmlStream::OnStart(void* self, const char* name, const char** attrs) {
  auto* x = static_cast<XmlStream*>(self);
  if (x->error_.ok()) x->Fail(x->handler_.StartElement(name, attrs));
}

void XmlStream::OnEnd(void* self, const char*) {
  auto* x = static_cast<XmlStream*>(self);
  if (x->error_.ok()) x->Fail(x->handler_.EndElement());
}

void XmlStream::OnText(void* self, const char* s, int len) {
  auto* x = static_cast<XmlStream*>(self);
  if (x->error_.ok()) x->Fail(x->handler_.Text(absl::string_view(s, static_cast<size_t>(len))));
}

void XmlStream::OnDoctype(void* self, const char*, const char*, const char*, int) {
  auto* x = static_cast<XmlStream*>(self);
  x->Fail(absl::DataLossError(
      absl::StrCat(x->context_, ": DOCTYPE is not allowed (at ", x->Where(), ")")));
}

void DomBuilder::Start(const char* name, const char* const* attrs) {
  if (depth_ == 0) {
    doc_ = std::make_shared<pugi::xml_document>();
    current_ = *doc_;
  } else {
    FlushText();
  }
  current_ = current_.append_child(name);
  for (; attrs != nullptr && attrs[0] != nullptr; attrs += 2) {
    current_.append_attribute(attrs[0]).set_value(attrs[1]);
  }
  ++depth_;
}

void DomBuilder::Text(absl::string_view text) {
  if (depth_ > 0) text_.append(text.data(), text.size());
}

bool DomBuilder::End() {
  FlushText();
  current_ = current_.parent();
  return --depth_ == 0;
}

std::shared_ptr<pugi::xml_document> DomBuilder::Take() {
  current_ = pugi::xml_node();
  depth_ = 0;
  text_.clear();
  return std::move(doc_);
}

void DomBuilder::FlushText() {
  // pugixml's default parse drops whitespace-only text (indentation between elements); so do we,
  // so that readers see the same tree either way.
  if (text_.find_first_not_of(" \t\r\n") != std::string::npos) {
    current_.append_child(pugi::node_pcdata).set_value(text_.c_str());
  }
  text_.clear();
}

}  // namespace ccm::vsphere
