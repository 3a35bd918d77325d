#include "vsphere/soap.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace ccm::vsphere {
namespace {

constexpr absl::string_view kMissingObjectPayload = "type.ccm/vsphere.MissingObject";

absl::StatusCode CodeForFault(absl::string_view name) {
  if (name == "InvalidLogin" || name == "NotAuthenticated") {
    return absl::StatusCode::kUnauthenticated;
  }
  if (name == "ManagedObjectNotFound" || name == "NotFound" || name == "FileNotFound") {
    return absl::StatusCode::kNotFound;
  }
  if (name == "InvalidArgument" || name == "InvalidProperty" || name == "InvalidRequest" ||
      name == "InvalidType") {
    return absl::StatusCode::kInvalidArgument;
  }
  if (name == "NoPermission") return absl::StatusCode::kPermissionDenied;
  if (name == "NotSupported") return absl::StatusCode::kUnimplemented;
  if (name == "RequestCanceled") return absl::StatusCode::kCancelled;
  return absl::StatusCode::kUnknown;
}

}  // namespace

absl::Status SoapFaultStatus(const pugi::xml_node& fault) {
  std::string text = ChildText(fault, "faultstring");
  pugi::xml_node detail = Child(fault, "detail").first_child();
  while (detail && detail.type() != pugi::node_element) detail = detail.next_sibling();
  std::string name;
  if (detail) {
    name = XsiType(detail);
    if (name.empty()) {
      name = std::string(absl::StripSuffix(LocalName(detail.name()), "Fault"));
    }
  }
  if (name.empty()) name = "UnknownFault";
  absl::StatusCode code = CodeForFault(name);
  std::string msg = absl::StrCat(name, ": ", text.empty() ? "(no fault string)" : text);
  Moref missing;
  if (code == absl::StatusCode::kNotFound) {
    missing = ParseMoref(Child(detail, "obj"));
    if (!missing.empty()) {
      msg = absl::StrCat("managed object ", missing.ToString(), " not found (", msg, ")");
    }
  }
  absl::Status s(code, msg);
  s.SetPayload(kSoapFaultPayload, absl::Cord(name));
  if (!missing.empty()) s.SetPayload(kMissingObjectPayload, absl::Cord(missing.ToString()));
  return s;
}

bool IsUnknownMethodFault(const absl::Status& s) {
  if (s.ok()) return false;
  const std::string name = FaultName(s);
  if (name == "MethodNotFound") return true;
  return absl::StrContains(s.message(), "Unable to resolve WSDL method name") ||
         absl::StrContains(s.message(), "no vmomi type defined for");
}

std::string XmlEscape(absl::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string BuildEnvelope(absl::string_view body_xml, absl::string_view header_xml) {
  return absl::StrCat(
      R"(<?xml version="1.0" encoding="UTF-8"?>)",
      R"(<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/")",
      R"( xmlns:xsd="http://www.w3.org/2001/XMLSchema")",
      R"( xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">)",
      header_xml.empty() ? "" : absl::StrCat("<soapenv:Header>", header_xml, "</soapenv:Header>"),
      "<soapenv:Body>", body_xml, "</soapenv:Body></soapenv:Envelope>");
}

std::string BuildMethod(absl::string_view method, absl::string_view args_xml,
                        absl::string_view ns) {
  return absl::StrCat("<", method, " xmlns=\"", ns, "\">", args_xml, "</", method, ">");
}

std::string MorefXml(absl::string_view tag, const Moref& ref) {
  return absl::StrCat("<", tag, " type=\"", XmlEscape(ref.type), "\">", XmlEscape(ref.value), "</",
                      tag, ">");
}

std::string TextXml(absl::string_view tag, absl::string_view text) {
  return absl::StrCat("<", tag, ">", XmlEscape(text), "</", tag, ">");
}

pugi::xml_node SoapResponse::returnval() const { return Child(body, "returnval"); }

absl::StatusOr<SoapResponse> ParseSoapResponse(absl::string_view body, absl::string_view url) {
  auto doc = std::make_shared<pugi::xml_document>();
  pugi::xml_parse_result r = doc->load_buffer(body.data(), body.size());
  auto malformed = [&](absl::string_view why) {
    return absl::InternalError(
        absl::StrCat("malformed SOAP response from ", url.empty() ? "<unknown>" : url, ": ", why));
  };
  if (!r) {
    return malformed(absl::StrCat(r.description(), " at offset ", r.offset));
  }
  pugi::xml_node env = doc->document_element();
  if (LocalName(env.name()) != "Envelope") {
    return malformed(absl::StrCat("root element is <", env.name(), ">, not a SOAP Envelope"));
  }
  pugi::xml_node b = Child(env, "Body");
  if (!b) return malformed("no SOAP Body");
  pugi::xml_node first = b.first_child();
  while (first && first.type() != pugi::node_element) first = first.next_sibling();
  if (!first) return malformed("empty SOAP Body");
  if (LocalName(first.name()) == "Fault") return SoapFaultStatus(first);
  SoapResponse out;
  out.body = first;
  out.doc = std::move(doc);
  return out;
}

absl::StatusOr<SoapResponse> ParseHttpSoapResponse(int http_status, absl::string_view body,
                                                   absl::string_view url) {
  absl::StatusOr<SoapResponse> r = ParseSoapResponse(body, url);
  if (http_status == 200) return r;
  if (!r.ok() && !FaultName(r.status()).empty()) return r;  // a SOAP fault explains it best
  absl::Status s = absl::UnavailableError(absl::StrCat("HTTP ", http_status, " from ", url));
  s.SetPayload(kHttpStatusPayload, absl::Cord(absl::StrCat(http_status)));
  return s;
}

absl::Status NamedFaultStatus(absl::string_view fault_name, absl::string_view message) {
  absl::Status s(CodeForFault(fault_name), absl::StrCat(fault_name, ": ", message));
  s.SetPayload(kSoapFaultPayload, absl::Cord(fault_name));
  return s;
}

absl::Status MissingSetSessionFault(const pugi::xml_node& returnval) {
  // RetrievePropertiesEx: returnval/objects/missingSet; RetrieveProperties: returnval/missingSet
  // (each returnval is an ObjectContent).
  auto check = [](const pugi::xml_node& object_content) -> absl::Status {
    for (const pugi::xml_node& m : Children(object_content, "missingSet")) {
      pugi::xml_node fault = Child(Child(m, "fault"), "fault");
      if (XsiType(fault) == "NotAuthenticated") {
        return NamedFaultStatus("NotAuthenticated",
                                absl::StrCat("property ", ChildText(m, "path"), " of ",
                                             ParseMoref(Child(object_content, "obj")).ToString(),
                                             " is not readable without a session (missingSet)"));
      }
    }
    return absl::OkStatus();
  };
  for (pugi::xml_node rv = returnval; rv; rv = rv.next_sibling(returnval.name())) {
    if (absl::Status s = check(rv); !s.ok()) return s;
    for (const pugi::xml_node& o : Children(rv, "objects")) {
      if (absl::Status s = check(o); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

std::string FaultName(const absl::Status& s) {
  auto p = s.GetPayload(kSoapFaultPayload);
  return p ? std::string(*p) : std::string();
}

bool IsNotAuthenticated(const absl::Status& s) { return FaultName(s) == "NotAuthenticated"; }

int HttpStatusOf(const absl::Status& s) {
  auto p = s.GetPayload(kHttpStatusPayload);
  int code = 0;
  if (p && absl::SimpleAtoi(std::string(*p), &code)) return code;
  return 0;
}

std::optional<Moref> MissingObjectOf(const absl::Status& s) {
  auto p = s.GetPayload(kMissingObjectPayload);
  if (!p) return std::nullopt;
  std::string v(*p);
  size_t colon = v.find(':');
  if (colon == std::string::npos) return std::nullopt;
  return Moref{v.substr(0, colon), v.substr(colon + 1)};
}

absl::string_view LocalName(absl::string_view qualified) {
  size_t colon = qualified.rfind(':');
  return colon == absl::string_view::npos ? qualified : qualified.substr(colon + 1);
}

pugi::xml_node Child(const pugi::xml_node& n, absl::string_view local) {
  for (pugi::xml_node c = n.first_child(); c; c = c.next_sibling()) {
    if (c.type() == pugi::node_element && LocalName(c.name()) == local) return c;
  }
  return pugi::xml_node();
}

std::vector<pugi::xml_node> Children(const pugi::xml_node& n, absl::string_view local) {
  std::vector<pugi::xml_node> out;
  for (pugi::xml_node c = n.first_child(); c; c = c.next_sibling()) {
    if (c.type() == pugi::node_element && LocalName(c.name()) == local) out.push_back(c);
  }
  return out;
}

std::string ChildText(const pugi::xml_node& n, absl::string_view local) {
  return Child(n, local).child_value();
}

std::string XsiType(const pugi::xml_node& n) {
  for (pugi::xml_attribute a = n.first_attribute(); a; a = a.next_attribute()) {
    absl::string_view name = a.name();
    if (LocalName(name) == "type" && name != "type") {
      return std::string(LocalName(a.value()));
    }
  }
  return "";
}

Moref ParseMoref(const pugi::xml_node& n) {
  if (!n) return Moref{};
  return Moref{n.attribute("type").value(), n.child_value()};
}

}  // namespace ccm::vsphere
