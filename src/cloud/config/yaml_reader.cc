// YAML reader on yaml-cpp. yaml-cpp throws; every exception is turned into a Status here.
// Keys match exactly (like yaml.v2 in the reference); a kebab-case or otherwise misspelt key is
// reported with the right spelling.
#include <exception>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cloud/config/raw_config.h"
#include "yaml-cpp/yaml.h"

namespace ccm::cloud::config_internal {
namespace {

std::string Where(absl::string_view file, absl::string_view path, const YAML::Mark& m) {
  if (m.is_null()) return absl::StrCat(file, ": ", path);
  return absl::StrCat(file, ": ", path, " (line ", m.line + 1, ", column ", m.column + 1, ")");
}

class YamlReader {
 public:
  explicit YamlReader(absl::string_view file) : file_(file) {}

  absl::StatusOr<RawConfig> Read(const YAML::Node& root) {
    if (!root.IsMap()) {
      return absl::InvalidArgumentError(
          absl::StrCat(file_, ": expected a YAML mapping at the top level"));
    }
    std::set<std::string> seen;
    for (const auto& kv : root) {
      std::string key = kv.first.Scalar();
      const YAML::Node& v = kv.second;
      std::string where = Where(file_, key, kv.first.Mark());
      if (!seen.insert(key).second) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": duplicate key \"", key, "\""));
      }
      absl::Status s;
      if (key == "global")
        s = Section(v, key, SectionKind::kGlobal, raw_.global);
      else if (key == "labels")
        s = Section(v, key, SectionKind::kLabels, raw_.labels);
      else if (key == "nodes")
        s = Section(v, key, SectionKind::kNodes, raw_.nodes);
      else if (key == "nsxt")
        s = Section(v, key, SectionKind::kNsxt, raw_.nsxt);
      else if (key == "loadBalancer") {
        s = Section(v, key, SectionKind::kLoadBalancer, raw_.load_balancer);
      } else if (key == "route")
        s = Section(v, key, SectionKind::kRoute, raw_.route);
      else if (key == "vcenter") {
        s = Labelled(v, key, SectionKind::kVirtualCenter, raw_.vcenters);
      } else if (key == "loadBalancerClass") {
        s = Labelled(v, key, SectionKind::kLoadBalancerClass, raw_.lb_classes);
      } else {
        std::string msg = absl::StrCat(where, ": unknown top-level key \"", key, "\" ignored");
        std::string lower = absl::AsciiStrToLower(key);
        const char* hint = nullptr;
        for (const char* known : {"global", "vcenter", "labels", "nodes", "nsxt", "loadBalancer",
                                  "loadBalancerClass", "route"}) {
          if (absl::EqualsIgnoreCase(key, known)) hint = known;
        }
        if (lower == "virtualcenter") hint = "vcenter";
        if (hint != nullptr) absl::StrAppend(&msg, " (did you mean \"", hint, "\"?)");
        raw_.warnings.push_back(std::move(msg));
      }
      if (!s.ok()) return s;
    }
    raw_.yaml = true;
    return std::move(raw_);
  }

 private:
  absl::Status Section(const YAML::Node& node, const std::string& path, SectionKind kind,
                       std::optional<RawSection>& slot) {
    slot = RawSection{Where(file_, path, node.Mark()), {}};
    return Fill(node, path, kind, *slot);
  }

  absl::Status Labelled(const YAML::Node& node, const std::string& path, SectionKind kind,
                        std::map<std::string, RawSection>& slots) {
    if (node.IsNull()) return absl::OkStatus();
    if (!node.IsMap()) {
      return absl::InvalidArgumentError(absl::StrCat(Where(file_, path, node.Mark()),
                                                     ": expected a mapping of name to settings"));
    }
    for (const auto& kv : node) {
      if (!kv.first.IsScalar() || kv.first.Scalar().empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat(Where(file_, path, kv.first.Mark()), ": expected a non-empty name"));
      }
      std::string label = kv.first.Scalar();
      std::string sub = absl::StrCat(path, ".", label);
      auto [it, inserted] =
          slots.try_emplace(label, RawSection{Where(file_, sub, kv.first.Mark()), {}});
      if (!inserted) {
        return absl::InvalidArgumentError(
            absl::StrCat(Where(file_, sub, kv.first.Mark()), ": duplicate key \"", label, "\""));
      }
      absl::Status s = Fill(kv.second, sub, kind, it->second);
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }

  absl::Status Fill(const YAML::Node& node, const std::string& path, SectionKind kind,
                    RawSection& out) {
    if (node.IsNull()) return absl::OkStatus();
    if (!node.IsMap()) {
      return absl::InvalidArgumentError(
          absl::StrCat(Where(file_, path, node.Mark()), ": expected a mapping of settings"));
    }
    for (const auto& kv : node) {
      if (!kv.first.IsScalar()) {
        return absl::InvalidArgumentError(
            absl::StrCat(Where(file_, path, kv.first.Mark()), ": expected a key name"));
      }
      std::string key = kv.first.Scalar();
      std::string kpath = absl::StrCat(path, ".", key);
      std::string where = Where(file_, kpath, kv.first.Mark());
      std::string hint;
      const KeySpec* spec = FindKey(kind, key, /*yaml=*/true, &hint);
      if (spec == nullptr) {
        std::string msg = absl::StrCat(where, ": unknown key \"", key, "\" ignored");
        if (!hint.empty()) absl::StrAppend(&msg, " (did you mean \"", hint, "\"?)");
        raw_.warnings.push_back(std::move(msg));
        continue;
      }
      if (out.keys.count(spec->ini) != 0) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": duplicate key \"", key, "\""));
      }
      const YAML::Node& v = kv.second;
      RawValue value;
      value.where = where;
      if (v.IsNull()) continue;  // `key:` with nothing = unset
      if (v.IsScalar()) {
        value.items.push_back(v.Scalar());
      } else if (v.IsSequence()) {
        value.is_list = true;
        for (const auto& item : v) {
          if (!item.IsScalar()) {
            return absl::InvalidArgumentError(
                absl::StrCat(where, ": expected a list of plain values"));
          }
          value.items.push_back(item.Scalar());
        }
      } else if (v.IsMap()) {
        value.is_map = true;
        for (const auto& e : v) {
          if (!e.first.IsScalar() || !e.second.IsScalar()) {
            return absl::InvalidArgumentError(
                absl::StrCat(where, ": expected a mapping of plain values"));
          }
          value.map[e.first.Scalar()] = e.second.Scalar();
        }
      }
      out.keys[spec->ini] = std::move(value);
    }
    return absl::OkStatus();
  }

  std::string file_;
  RawConfig raw_;
};

}  // namespace

bool LooksLikeYamlMapping(absl::string_view bytes) {
  try {
    return YAML::Load(std::string(bytes)).IsMap();
  } catch (const std::exception&) {
    return false;
  }
}

absl::StatusOr<RawConfig> ReadYaml(absl::string_view bytes, absl::string_view file) {
  try {
    YAML::Node root = YAML::Load(std::string(bytes));
    return YamlReader(file).Read(root);
  } catch (const YAML::Exception& e) {
    std::string msg = e.msg;
    if (!e.mark.is_null()) {
      return absl::InvalidArgumentError(absl::StrCat(file, ": line ", e.mark.line + 1, ", column ",
                                                     e.mark.column + 1, ": invalid YAML: ", msg));
    }
    return absl::InvalidArgumentError(absl::StrCat(file, ": invalid YAML: ", msg));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(file, ": invalid YAML: ", e.what()));
  }
}

}  // namespace ccm::cloud::config_internal
