#pragma once
// The vim25 SOAP wire format: request envelopes, response parsing and SOAP fault -> absl::Status
// mapping. Pure functions (no I/O), so they are table-tested and fuzzed on their own.
//
// Fault mapping (the fault's type name is kept as a payload, see FaultName()):
//   InvalidLogin, NotAuthenticated           -> Unauthenticated
//   ManagedObjectNotFound                    -> NotFound (message names the object)
//   NotFound, FileNotFound                   -> NotFound
//   InvalidArgument, InvalidProperty,
//   InvalidRequest, InvalidType              -> InvalidArgument
//   NoPermission                             -> PermissionDenied
//   NotSupported                             -> Unimplemented
//   RequestCanceled                          -> Cancelled
//   anything else (RuntimeFault, SystemError) -> Unknown
// Non-200 HTTP answers without a SOAP fault -> Unavailable ("HTTP 503 from <url>"); malformed XML
// -> Internal ("malformed SOAP response from <url>: <reason>").

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "pugixml.hpp"
#include "vsphere/moref.h"

namespace ccm::vsphere {

// Status payload type URLs.
inline constexpr absl::string_view kSoapFaultPayload = "type.ccm/vsphere.SoapFault";
inline constexpr absl::string_view kHttpStatusPayload = "type.ccm/vsphere.HttpStatus";

// Escapes &, <, >, " and ' for element text and attribute values.
std::string XmlEscape(absl::string_view s);
// <soapenv:Envelope ...>[<soapenv:Header>{header_xml}</soapenv:Header>]<soapenv:Body>{body_xml}
// </soapenv:Body></soapenv:Envelope>, with the xsi and xsd namespaces declared (property specs
// need xsi:type); the header only when `header_xml` is not empty.
std::string BuildEnvelope(absl::string_view body_xml, absl::string_view header_xml = "");
// <{method} xmlns="{ns}">{args_xml}</{method}>
std::string BuildMethod(absl::string_view method, absl::string_view args_xml,
                        absl::string_view ns = "urn:vim25");
// <{tag} type="{type}">{value}</{tag}>, escaped.
std::string MorefXml(absl::string_view tag, const Moref& ref);
// <{tag}>{escaped text}</{tag}>
std::string TextXml(absl::string_view tag, absl::string_view text);

// A parsed response. `body` is the first element inside soapenv:Body (e.g.
// <RetrievePropertiesExResponse>); the document is shared so nodes stay valid while any copy lives.
struct SoapResponse {
  std::shared_ptr<const pugi::xml_document> doc;
  pugi::xml_node body;
  // The <returnval> child of `body` (empty node when the method returned nothing).
  pugi::xml_node returnval() const;
};

// Parses a complete SOAP response body (any HTTP status). SOAP faults become their typed status.
// `url` only appears in error messages. Never crashes on any input.
absl::StatusOr<SoapResponse> ParseSoapResponse(absl::string_view body, absl::string_view url = "");
// As above, but also applies the HTTP status: a SOAP fault wins over the HTTP code (vCenter sends
// faults with 500); otherwise a non-200 answer is Unavailable naming the code and URL.
absl::StatusOr<SoapResponse> ParseHttpSoapResponse(int http_status, absl::string_view body,
                                                   absl::string_view url);

// The typed status of a <Fault> element (the mapping above), as ParseSoapResponse returns it.
absl::Status SoapFaultStatus(const pugi::xml_node& fault);

// Receives a SOAP answer while it arrives, for answers too big to hold whole (Client::
// CallStreaming). The sink parses the bytes itself and hands results on as it finds them.
class SoapStreamSink {
 public:
  virtual ~SoapStreamSink() = default;
  // Called before every attempt, the first included: forget everything fed before.
  virtual void Reset() = 0;
  // The next bytes of an HTTP 200 answer. An error ends the transfer and becomes the call's
  // result; a SOAP fault in the body must come back as SoapFaultStatus() makes it (the Client
  // logs in again on NotAuthenticated).
  virtual absl::Status Feed(absl::string_view bytes) = 0;
  // The 200 answer ended: an unfinished document (a truncated answer) is an error.
  virtual absl::Status Finish() = 0;
  // True once results were handed on: the Client then never sends the request again, since the
  // consumer would see them twice.
  virtual bool emitted() const = 0;
};

// A status for the fault `fault_name` as if vCenter had sent it (same code mapping and payload).
absl::Status NamedFaultStatus(absl::string_view fault_name, absl::string_view message);
// A NotAuthenticated status when a RetrieveProperties(Ex) answer (`returnval`, with its siblings)
// reports a NotAuthenticated fault for any property in a missingSet: vCenter (and govmomi's
// simulator) answer a session it does not know this way instead of with a SOAP fault, e.g. after
// a restart. OK otherwise.
absl::Status MissingSetSessionFault(const pugi::xml_node& returnval);

// The SOAP fault type name carried by `s` ("NotAuthenticated", ...), or "" when `s` is not a fault.
std::string FaultName(const absl::Status& s);
// True for a fault saying the server does not know the called method: MethodNotFound, a vmomi
// server's InvalidRequest "Unable to resolve WSDL method name <m> ...", or govmomi's simulator's
// "no vmomi type defined for '<m>'". How a vCenter older than a method refuses it (the CNS
// snapshot calls on vCenter 7.0U2).
bool IsUnknownMethodFault(const absl::Status& s);
// True for a NotAuthenticated fault (the session expired or was invalidated: log in again).
bool IsNotAuthenticated(const absl::Status& s);
// The HTTP status carried by `s` (set for non-200 answers), or 0.
int HttpStatusOf(const absl::Status& s);
// The object named by a ManagedObjectNotFound fault, if any.
std::optional<Moref> MissingObjectOf(const absl::Status& s);

// ---- XML reading helpers (vim25 uses a default namespace; match local names, drop prefixes) ----
absl::string_view LocalName(absl::string_view qualified);
// First child element with this local name, or an empty node.
pugi::xml_node Child(const pugi::xml_node& n, absl::string_view local);
std::vector<pugi::xml_node> Children(const pugi::xml_node& n, absl::string_view local);
// Text of the first child with this local name ("" if absent).
std::string ChildText(const pugi::xml_node& n, absl::string_view local);
// The xsi:type attribute without a namespace prefix ("" if absent).
std::string XsiType(const pugi::xml_node& n);
// {type attribute, text} of a ManagedObjectReference element.
Moref ParseMoref(const pugi::xml_node& n);

}  // namespace ccm::vsphere
