// A config file's text (YAML, ${VAR} substitution, durations, sizes, models and deployments...)
// through config::ParseConfig, as start-up reads turnpike.yaml. Its contract is that a bad file
// throws ConfigError naming the key: that is caught here; any other exception escapes and is
// the finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "config/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const turnpike::config::Config config =
        turnpike::config::ParseConfig(std::string(reinterpret_cast<const char*>(data), size));
    (void)config;
  } catch (const turnpike::config::ConfigError&) {
  }
  return 0;
}
