// Legacy INI (gcfg) reader, our own small parser following gcfg's syntax:
// - `[Section]` and `[Section "subsection"]`; section and key names are case-insensitive,
//   subsection names are case-sensitive (\" and \\ escapes); repeated sections merge.
// - `key = value`; values may be quoted ("..." with \" \\ \n \t \b escapes, also mid-value),
//   unquoted leading/trailing whitespace is trimmed; `;` and `#` start a comment outside quotes,
//   also after a value; a backslash at the end of a line continues the value on the next line.
// - `key` alone means true for booleans (an error for other keys, reported by BuildConfig).
// - A repeated key: the last value wins (gcfg semantics for single-valued variables);
//   `key =` (blank value) resets the key to its default.
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cloud/config/raw_config.h"

namespace ccm::cloud::config_internal {
namespace {

#define CCM_INI_RETURN_IF_ERROR(expr) \
  do {                                \
    absl::Status s_ = (expr);         \
    if (!s_.ok()) return s_;          \
  } while (0)

bool IsNameChar(char c) { return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-'; }

class IniReader {
 public:
  IniReader(absl::string_view text, absl::string_view file) : text_(text), file_(file) {}

  absl::StatusOr<RawConfig> Read() {
    if (absl::StartsWith(text_, "\xEF\xBB\xBF")) pos_ = 3;  // UTF-8 BOM
    while (pos_ < text_.size()) {
      ++line_;
      absl::Status s = ReadLine();
      if (!s.ok()) return s;
    }
    return std::move(raw_);
  }

 private:
  absl::Status Error(absl::string_view msg) const {
    return absl::InvalidArgumentError(absl::StrCat(file_, ":", line_, ": ", msg));
  }
  char Peek() const { return pos_ < text_.size() ? text_[pos_] : '\n'; }
  bool AtEol() const { return pos_ >= text_.size() || text_[pos_] == '\n'; }
  void SkipSpace() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\r' ||
            text_[pos_] == '\v' || text_[pos_] == '\f'))
      ++pos_;
  }
  void SkipToEol() {
    while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
    if (pos_ < text_.size()) ++pos_;
  }
  // After a construct: only whitespace or a comment may follow.
  absl::Status ExpectEol() {
    SkipSpace();
    if (!AtEol() && Peek() != ';' && Peek() != '#') {
      return Error(absl::StrFormat("unexpected character '%c' after the %s", Peek(),
                                   section_ == nullptr ? "section header" : "value"));
    }
    SkipToEol();
    return absl::OkStatus();
  }

  absl::Status ReadLine() {
    SkipSpace();
    if (AtEol() || Peek() == ';' || Peek() == '#') {
      SkipToEol();
      return absl::OkStatus();
    }
    if (Peek() == '[') return ReadHeader();
    if (!absl::ascii_isalpha(static_cast<unsigned char>(Peek()))) {
      return Error(
          absl::StrFormat("expected a section header or `key = value`, found '%c'", Peek()));
    }
    return ReadVariable();
  }

  absl::Status ReadHeader() {
    ++pos_;  // '['
    SkipSpace();
    size_t start = pos_;
    while (pos_ < text_.size() && (IsNameChar(text_[pos_]) || text_[pos_] == '.')) ++pos_;
    std::string name(text_.substr(start, pos_ - start));
    if (name.empty()) return Error("expected a section name after '['");
    SkipSpace();
    std::optional<std::string> sub;
    if (Peek() == '"') {
      ++pos_;
      std::string s;
      while (true) {
        if (AtEol()) return Error("unterminated subsection name (missing closing '\"')");
        char c = text_[pos_++];
        if (c == '"') break;
        if (c == '\\') {
          if (AtEol()) return Error("unterminated subsection name (missing closing '\"')");
          char e = text_[pos_++];
          if (e != '"' && e != '\\') {
            return Error(absl::StrFormat("invalid escape \\%c in subsection name", e));
          }
          c = e;
        }
        s.push_back(c);
      }
      sub = std::move(s);
      SkipSpace();
    }
    if (Peek() != ']') return Error("expected ']' to close the section header");
    ++pos_;
    CCM_INI_RETURN_IF_ERROR(OpenSection(name, sub));
    return ExpectEol();
  }

  absl::Status OpenSection(const std::string& name, const std::optional<std::string>& sub) {
    std::string lower = absl::AsciiStrToLower(name);
    std::string header =
        sub ? absl::StrFormat("[%s \"%s\"]", name, *sub) : absl::StrFormat("[%s]", name);
    header_ = header;
    std::string where = absl::StrCat(file_, ":", line_, ": ", header);
    section_ = nullptr;
    ignored_ = false;
    auto single = [&](std::optional<RawSection>& slot, SectionKind kind) -> absl::Status {
      if (sub) return Error(absl::StrCat("section ", header, " takes no subsection name"));
      if (!slot) slot = RawSection{where, {}};
      section_ = &*slot;
      kind_ = kind;
      return absl::OkStatus();
    };
    auto multi = [&](std::map<std::string, RawSection>& slots, SectionKind kind,
                     absl::string_view what) -> absl::Status {
      if (!sub) {
        return Error(
            absl::StrCat("section [", name, "] needs a ", what, ": [", name, " \"<", what, ">\"]"));
      }
      auto [it, inserted] = slots.try_emplace(*sub, RawSection{where, {}});
      it->second.label_is_server = true;
      section_ = &it->second;
      kind_ = kind;
      return absl::OkStatus();
    };
    if (lower == "global") return single(raw_.global, SectionKind::kGlobal);
    if (lower == "labels") return single(raw_.labels, SectionKind::kLabels);
    if (lower == "nodes") return single(raw_.nodes, SectionKind::kNodes);
    if (lower == "nsxt") return single(raw_.nsxt, SectionKind::kNsxt);
    if (lower == "loadbalancer") return single(raw_.load_balancer, SectionKind::kLoadBalancer);
    if (lower == "route") return single(raw_.route, SectionKind::kRoute);
    if (lower == "virtualcenter") {
      return multi(raw_.vcenters, SectionKind::kVirtualCenter, "vCenter address");
    }
    if (lower == "loadbalancerclass") {
      return multi(raw_.lb_classes, SectionKind::kLoadBalancerClass, "class name");
    }
    // The CSI driver's sections (csi-vsphere.conf).
    if (lower == "topologycategory") {
      return multi(raw_.topology_categories, SectionKind::kTopologyCategory, "category");
    }
    if (lower == "snapshot") return single(raw_.snapshot, SectionKind::kSnapshot);
    if (lower == "netpermissions") {
      return multi(raw_.net_permissions, SectionKind::kNetPermissions, "name");
    }
    ignored_ = true;
    if (lower == "network" || lower == "workspace" || lower == "disk") {
      raw_.warnings.push_back(
          absl::StrCat(where, ": section is deprecated (in-tree vSphere provider) and ignored"));
    } else {
      std::string msg = absl::StrCat(where, ": unknown section ignored");
      if (lower == "vcenter") {
        absl::StrAppend(&msg, " (did you mean [VirtualCenter \"<address>\"]?)");
      }
      raw_.warnings.push_back(std::move(msg));
    }
    return absl::OkStatus();
  }

  absl::Status ReadVariable() {
    size_t start = pos_;
    while (pos_ < text_.size() && IsNameChar(text_[pos_])) ++pos_;
    std::string name(text_.substr(start, pos_ - start));
    int key_line = line_;
    if (section_ == nullptr && !ignored_) {
      return Error(absl::StrCat("key \"", name, "\" appears before any section header"));
    }
    SkipSpace();
    RawValue value;
    if (AtEol() || Peek() == ';' || Peek() == '#') {
      value.implicit = true;
      value.items.push_back("true");
      SkipToEol();
    } else if (Peek() == '=') {
      ++pos_;
      std::string v;
      CCM_INI_RETURN_IF_ERROR(ReadValue(v));
      value.items.push_back(std::move(v));
    } else {
      return Error(absl::StrCat("expected '=' after key \"", name, "\""));
    }
    if (ignored_) return absl::OkStatus();
    std::string where = absl::StrCat(file_, ":", key_line, ": ", header_, " ", name);
    std::string hint;
    const KeySpec* spec = FindKey(kind_, name, /*yaml=*/false, &hint);
    if (spec == nullptr) {
      std::string msg = absl::StrCat(file_, ":", key_line, ": unknown key \"", name, "\" in ",
                                     header_, " ignored");
      if (!hint.empty()) absl::StrAppend(&msg, " (did you mean \"", hint, "\"?)");
      raw_.warnings.push_back(std::move(msg));
      return absl::OkStatus();
    }
    value.where = std::move(where);
    if (!value.implicit && value.items[0].empty()) {
      section_->keys.erase(spec->ini);  // blank value: back to the default
    } else {
      section_->keys[spec->ini] = std::move(value);
    }
    return absl::OkStatus();
  }

  // Reads the rest of a value (after '=') up to the end of the logical line.
  absl::Status ReadValue(std::string& out) {
    SkipSpace();
    bool quoted = false;
    size_t keep = 0;  // length of `out` that must survive trailing-space trimming
    while (true) {
      if (pos_ >= text_.size()) {
        if (quoted) return Error("unterminated quoted value (missing closing '\"')");
        break;
      }
      char c = text_[pos_];
      if (c == '\n') {
        if (quoted) return Error("unterminated quoted value (missing closing '\"')");
        ++pos_;
        break;
      }
      if (!quoted && (c == ';' || c == '#')) {
        SkipToEol();
        break;
      }
      ++pos_;
      if (c == '"') {
        quoted = !quoted;
        keep = out.size();
        continue;
      }
      if (c == '\\') {
        if (pos_ >= text_.size()) return Error("value ends with a lone backslash");
        char e = text_[pos_++];
        switch (e) {
          case '\\':
            out.push_back('\\');
            break;
          case '"':
            out.push_back('"');
            break;
          case 'n':
            out.push_back('\n');
            break;
          case 't':
            out.push_back('\t');
            break;
          case 'b':
            out.push_back('\b');
            break;
          case '\r':
            if (pos_ < text_.size() && text_[pos_] == '\n') ++pos_;
            ++line_;
            break;
          case '\n':
            ++line_;
            break;  // line continuation
          default:
            return Error(
                absl::StrFormat("invalid escape \\%c in value (valid: \\\\ \\\" \\n \\t \\b)", e));
        }
        keep = out.size();
        continue;
      }
      if (c == '\r' && !quoted) continue;
      out.push_back(c);
      if (quoted || !absl::ascii_isspace(static_cast<unsigned char>(c))) keep = out.size();
    }
    out.resize(keep);
    return absl::OkStatus();
  }

  absl::string_view text_;
  std::string file_;
  size_t pos_ = 0;
  int line_ = 0;
  RawConfig raw_;
  RawSection* section_ = nullptr;
  SectionKind kind_ = SectionKind::kGlobal;
  bool ignored_ = false;
  std::string header_;
};

}  // namespace

absl::StatusOr<RawConfig> ReadIni(absl::string_view bytes, absl::string_view file) {
  return IniReader(bytes, file).Read();
}

}  // namespace ccm::cloud::config_internal
