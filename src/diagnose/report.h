#pragma once
// What `diagnose` found: one line per check (ok / warning / error), with the fix in words for
// what is not ok. Printed as aligned text for people or as JSON (--output json) for tools; the
// exit code is 1 when any check is an error. Pure.

#include <string>
#include <vector>

namespace ccm::diagnose {

enum class Level { kOk, kWarning, kError };
const char* LevelName(Level l);  // "ok", "warning", "error"

struct Finding {
  std::string check;  // "config", "vcenter vc1", ...
  Level level = Level::kOk;
  std::string message;
  std::string fix;  // empty for ok
};

class Report {
 public:
  void Ok(std::string check, std::string message);
  void Warn(std::string check, std::string message, std::string fix);
  void Error(std::string check, std::string message, std::string fix);

  const std::vector<Finding>& findings() const { return findings_; }
  int Count(Level l) const;
  bool HasErrors() const { return Count(Level::kError) > 0; }
  // "ok       config         parsed ..." with the fix on the next line, indented; a summary.
  std::string Text() const;
  // {"findings": [{"check", "level", "message", "fix"}], "errors": n, "warnings": n}
  std::string Json() const;

 private:
  std::vector<Finding> findings_;
};

}  // namespace ccm::diagnose
