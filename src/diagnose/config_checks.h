#pragma once
// diagnose, first group of checks: the configuration file, as the component reads it (the same
// parser, so diagnose and the component never disagree). A parse error is an error with its
// file:line message; each warning of the parser (an unknown key, ...) is a warning; each vCenter
// entry says what it resolves to: server and port, datacenters, where its credentials come from,
// how its certificate is checked. Secrets are never printed. Pure.

#include <string>

#include "absl/status/statusor.h"
#include "cloud/config/config.h"
#include "diagnose/report.h"

namespace ccm::diagnose {

void CheckConfig(const std::string& path, const absl::StatusOr<cloud::ParseResult>& parsed,
                 Report& report);

}  // namespace ccm::diagnose
