#include "app/shared/diagnose_cli.h"

#include <cstdio>
#include <memory>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "spdlog/sinks/stdout_sinks.h"

namespace ccm::app {

bool IsDiagnose(const std::vector<std::string>& args) {
  return args.size() > 1 && args[1] == "diagnose";
}

absl::StatusOr<DiagnoseArgs> ParseDiagnoseArgs(const std::vector<std::string>& args) {
  DiagnoseArgs out;
  std::string output = "text";
  for (size_t i = 0; i < args.size(); ++i) {
    if (i == 1 && args[i] == "diagnose") continue;
    const std::string& a = args[i];
    if (a == "--output" || a == "-o") {
      if (i + 1 >= args.size()) return absl::InvalidArgumentError("--output needs text or json");
      output = args[++i];
    } else if (absl::StartsWith(a, "--output=")) {
      output = a.substr(9);
    } else {
      out.rest.push_back(a);
    }
  }
  if (output != "text" && output != "json") {
    return absl::InvalidArgumentError(absl::StrCat("--output \"", output, "\": want text or json"));
  }
  out.json = output == "json";
  return out;
}

std::optional<DiagnoseArgs> DiagnoseArgsOrComplain(const std::vector<std::string>& args) {
  absl::StatusOr<DiagnoseArgs> d = ParseDiagnoseArgs(args);
  if (d.ok()) {
    // The report is the output: the components' informational log lines would only interleave
    // with it; warnings and errors still go to stderr.
    auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    sink->set_level(spdlog::level::warn);
    logging::SetSink(std::move(sink));
    return *std::move(d);
  }
  fprintf(stderr, "diagnose: %s\n", std::string(d.status().message()).c_str());
  return std::nullopt;
}

int PrintReport(const diagnose::Report& report, bool json) {
  const std::string text = json ? report.Json() : report.Text();
  fwrite(text.data(), 1, text.size(), stdout);
  fflush(stdout);
  return report.HasErrors() ? 1 : 0;
}

}  // namespace ccm::app
