// libFuzzer target for ParseConfig. CCM_FUZZ_FORMAT picks the parser: the INI target prefixes a
// section header so the input reaches the INI reader; the YAML target feeds the bytes as is.
#include <cstddef>
#include <cstdint>
#include <string>

#include "cloud/config/config.h"
#include "cloud/config/credential_data.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
#if CCM_FUZZ_INI
  text = "[Global]\n" + text;
#endif
  auto r = ccm::cloud::ParseConfig(text, {{"VSPHERE_VCENTER_1", "fuzz"}});
  if (r.ok()) (void)r->config.ToString();
  // The Secret key parser sees the same bytes as key=value lines.
  ccm::cloud::SecretData secret;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    std::string line = text.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    size_t eq = line.find('=');
    if (eq != std::string::npos) secret[line.substr(0, eq)] = line.substr(eq + 1);
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  (void)ccm::cloud::ParseCredentialData(secret, "fuzz");
  return 0;
}
