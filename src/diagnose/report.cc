#include "diagnose/report.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace ccm::diagnose {

const char* LevelName(Level l) {
  switch (l) {
    case Level::kOk:
      return "ok";
    case Level::kWarning:
      return "warning";
    case Level::kError:
      return "error";
  }
  return "?";
}

void Report::Ok(std::string check, std::string message) {
  findings_.push_back({std::move(check), Level::kOk, std::move(message), ""});
}

void Report::Warn(std::string check, std::string message, std::string fix) {
  findings_.push_back({std::move(check), Level::kWarning, std::move(message), std::move(fix)});
}

void Report::Error(std::string check, std::string message, std::string fix) {
  findings_.push_back({std::move(check), Level::kError, std::move(message), std::move(fix)});
}

int Report::Count(Level l) const {
  return static_cast<int>(std::count_if(findings_.begin(), findings_.end(),
                                        [l](const Finding& f) { return f.level == l; }));
}

std::string Report::Text() const {
  size_t width = 0;
  for (const Finding& f : findings_) width = std::max(width, f.check.size());
  std::string out;
  for (const Finding& f : findings_) {
    std::string level = LevelName(f.level);
    level.resize(8, ' ');
    std::string check = f.check;
    check.resize(width + 2, ' ');
    absl::StrAppend(&out, level, check, f.message, "\n");
    if (!f.fix.empty())
      absl::StrAppend(&out, std::string(8 + width + 2, ' '), "fix: ", f.fix, "\n");
  }
  absl::StrAppend(&out, Count(Level::kError), " errors, ", Count(Level::kWarning), " warnings\n");
  return out;
}

std::string Report::Json() const {
  nlohmann::json list = nlohmann::json::array();
  for (const Finding& f : findings_) {
    nlohmann::json j = {{"check", f.check}, {"level", LevelName(f.level)}, {"message", f.message}};
    if (!f.fix.empty()) j["fix"] = f.fix;
    list.push_back(std::move(j));
  }
  const nlohmann::json out = {{"findings", std::move(list)},
                              {"errors", Count(Level::kError)},
                              {"warnings", Count(Level::kWarning)}};
  return out.dump(2) + "\n";
}

}  // namespace ccm::diagnose
