#include "cloud/core/guestinfo_metadata.h"

#include <yaml-cpp/yaml.h>
#include <zlib.h>

#include <algorithm>
#include <exception>
#include <nlohmann/json.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace ccm::cloud {
namespace {

constexpr size_t kMaxDecodedBytes = 1 << 20;

absl::StatusOr<std::string> Gunzip(const std::string& in) {
  z_stream zs{};
  // 32 + MAX_WBITS: accept gzip and zlib headers.
  if (inflateInit2(&zs, 32 + MAX_WBITS) != Z_OK) return absl::InternalError("inflateInit2 failed");
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  std::string out;
  char buf[16384];
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof(buf);
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      inflateEnd(&zs);
      return absl::InvalidArgumentError(absl::StrCat("gzip data is corrupt (zlib error ", rc, ")"));
    }
    out.append(buf, sizeof(buf) - zs.avail_out);
    if (out.size() > kMaxDecodedBytes) {
      inflateEnd(&zs);
      return absl::InvalidArgumentError("gzip data expands beyond 1 MiB");
    }
    if (rc == Z_OK && zs.avail_in == 0 && zs.avail_out != 0) {
      inflateEnd(&zs);
      return absl::InvalidArgumentError("gzip data is truncated");
    }
  }
  inflateEnd(&zs);
  return out;
}

absl::StatusOr<std::string> Base64Decode(absl::string_view in) {
  std::string compact;
  compact.reserve(in.size());
  for (char c : in)
    if (!absl::ascii_isspace(static_cast<unsigned char>(c))) compact.push_back(c);
  std::string out;
  if (!absl::Base64Unescape(compact, &out)) {
    return absl::InvalidArgumentError("value is not valid base64");
  }
  return out;
}

// JSON (ordered, so keys keep document order) -> YAML node, so one walker serves both formats.
YAML::Node JsonToYaml(const nlohmann::ordered_json& j) {
  YAML::Node n;
  if (j.is_object()) {
    n = YAML::Node(YAML::NodeType::Map);
    for (auto it = j.begin(); it != j.end(); ++it) n[it.key()] = JsonToYaml(it.value());
  } else if (j.is_array()) {
    n = YAML::Node(YAML::NodeType::Sequence);
    for (const auto& e : j) n.push_back(JsonToYaml(e));
  } else if (j.is_string()) {
    n = j.get<std::string>();
  } else if (!j.is_null()) {
    n = j.dump();
  }
  return n;
}

absl::StatusOr<YAML::Node> ParseDocument(const std::string& text) {
  absl::string_view t = absl::StripLeadingAsciiWhitespace(text);
  try {
    if (!t.empty() && (t.front() == '{' || t.front() == '[')) {
      return JsonToYaml(nlohmann::ordered_json::parse(t));
    }
    return YAML::Load(text);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("cannot unmarshal metadata: ", e.what()));
  }
}

std::string Scalar(const YAML::Node& n) { return n && n.IsScalar() ? n.Scalar() : std::string(); }

// Appends the address of "10.0.0.5/24" (prefix ignored) unless already present.
absl::Status AddAddress(const std::string& text, std::vector<IpAddress>& out) {
  absl::string_view t = absl::StripAsciiWhitespace(text);
  t = t.substr(0, t.find('/'));
  std::optional<IpAddress> ip = IpAddress::TryParse(t);
  if (!ip)
    return absl::InvalidArgumentError(
        absl::StrCat("static address \"", text, "\" is not an IP address"));
  if (std::find(out.begin(), out.end(), *ip) == out.end()) out.push_back(*ip);
  return absl::OkStatus();
}

absl::Status CollectV2(const YAML::Node& net, std::vector<IpAddress>& out) {
  for (const char* section : {"ethernets", "bonds", "bridges", "vlans"}) {
    const YAML::Node devices = net[section];
    if (!devices) continue;
    if (!devices.IsMap()) {
      return absl::InvalidArgumentError(absl::StrCat("network.", section, " is not a map"));
    }
    for (const auto& dev : devices) {
      if (!dev.second.IsMap()) continue;
      const YAML::Node addrs = dev.second["addresses"];
      if (!addrs) continue;
      if (!addrs.IsSequence()) {
        return absl::InvalidArgumentError(
            absl::StrCat("network.", section, ".", Scalar(dev.first), ".addresses is not a list"));
      }
      for (const YAML::Node& a : addrs) {
        if (a.IsScalar()) {
          CCM_RETURN_IF_ERROR(AddAddress(a.Scalar(), out));
        } else if (a.IsMap()) {  // {"10.0.0.5/24": {lifetime: 0, label: x}}
          for (const auto& kv : a) CCM_RETURN_IF_ERROR(AddAddress(Scalar(kv.first), out));
        }
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CollectV1(const YAML::Node& net, std::vector<IpAddress>& out) {
  const YAML::Node config = net["config"];
  if (!config) return absl::OkStatus();
  if (!config.IsSequence()) return absl::InvalidArgumentError("network.config is not a list");
  for (const YAML::Node& iface : config) {
    if (!iface.IsMap() || !iface["subnets"] || !iface["subnets"].IsSequence()) continue;
    for (const YAML::Node& subnet : iface["subnets"]) {
      if (!subnet.IsMap()) continue;
      const std::string type = absl::AsciiStrToLower(Scalar(subnet["type"]));
      if (type != "static" && type != "static6") continue;
      const std::string address = Scalar(subnet["address"]);
      if (!address.empty()) CCM_RETURN_IF_ERROR(AddAddress(address, out));
      // Extra addresses of the same subnet ("addresses" is accepted by some renderers).
      if (subnet["addresses"] && subnet["addresses"].IsSequence()) {
        for (const YAML::Node& a : subnet["addresses"])
          CCM_RETURN_IF_ERROR(AddAddress(Scalar(a), out));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CollectNetwork(YAML::Node net, std::vector<IpAddress>& out) {
  // A network config is sometimes wrapped once more: {network: {version: 2, ...}}.
  if (net.IsMap() && !net["version"] && net["network"] && net["network"].IsMap()) {
    net = net["network"];
  }
  if (!net.IsMap()) return absl::InvalidArgumentError("network config is not a map");
  const std::string version = Scalar(net["version"]);
  if (version == "2") return CollectV2(net, out);
  if (version == "1") return CollectV1(net, out);
  return absl::InvalidArgumentError(
      absl::StrCat("unsupported network config version \"", version, "\" (expected 1 or 2)"));
}

}  // namespace

absl::StatusOr<std::string> DecodeGuestinfoValue(absl::string_view value,
                                                 absl::string_view encoding) {
  const std::string enc = absl::AsciiStrToLower(absl::StripAsciiWhitespace(encoding));
  if (enc.empty()) return std::string(value);
  if (enc == "base64" || enc == "b64") {
    CCM_ASSIGN_OR_RETURN(std::string out, Base64Decode(value));
    if (out.size() > kMaxDecodedBytes) return absl::InvalidArgumentError("value exceeds 1 MiB");
    return out;
  }
  if (enc == "gzip+base64" || enc == "gz+b64") {
    CCM_ASSIGN_OR_RETURN(std::string zipped, Base64Decode(value));
    return Gunzip(zipped);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unsupported encoding \"", encoding, "\" (expected base64 or gzip+base64)"));
}

absl::StatusOr<std::vector<IpAddress>> ParseGuestinfoStaticAddresses(
    absl::string_view metadata_value, absl::string_view encoding) {
  std::vector<IpAddress> out;
  absl::StatusOr<std::string> text = DecodeGuestinfoValue(metadata_value, encoding);
  if (!text.ok()) return Annotate(text.status(), kGuestinfoMetadataKey);
  if (absl::StripAsciiWhitespace(*text).empty()) return out;

  absl::StatusOr<YAML::Node> doc = ParseDocument(*text);
  if (!doc.ok()) return Annotate(doc.status(), kGuestinfoMetadataKey);
  if (!doc->IsMap()) {
    return absl::InvalidArgumentError(absl::StrCat(
        kGuestinfoMetadataKey, ": cannot unmarshal metadata: the document is not a map"));
  }
  try {
    YAML::Node net = (*doc)["network"];
    if (!net || net.IsNull()) return out;
    if (net.IsScalar()) {  // an encoded network config
      const std::string net_encoding = Scalar((*doc)["network.encoding"]);
      absl::StatusOr<std::string> net_text = DecodeGuestinfoValue(net.Scalar(), net_encoding);
      if (!net_text.ok()) {
        return Annotate(net_text.status(), absl::StrCat(kGuestinfoMetadataKey, ": network"));
      }
      absl::StatusOr<YAML::Node> parsed = ParseDocument(*net_text);
      if (!parsed.ok()) {
        return Annotate(parsed.status(), absl::StrCat(kGuestinfoMetadataKey, ": network"));
      }
      net = *parsed;
    }
    absl::Status s = CollectNetwork(net, out);
    if (!s.ok()) return Annotate(s, absl::StrCat(kGuestinfoMetadataKey, ": network"));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(kGuestinfoMetadataKey, ": cannot unmarshal network config: ", e.what()));
  }
  return out;
}

}  // namespace ccm::cloud
