// The `telemetry` section: OpenTelemetry trace export (config.h has the YAML shape).
#include <yaml-cpp/yaml.h>

#include "config/yaml_map.h"

namespace turnpike::config {
namespace {
constexpr int64_t kMaxQueue = 1'000'000;
constexpr int64_t kMaxBatch = 100'000;
}  // namespace

TelemetryConfig ParseTelemetry(const YamlMap& root) {
  TelemetryConfig t;
  YamlMap top(root.Child("telemetry"), root.KeyPath("telemetry"), {"otlp"});
  YamlMap m(top.Child("otlp"), top.KeyPath("otlp"),
            {"endpoint", "protocol", "sampling_ratio", "headers", "queue_size", "batch_size",
             "export_interval", "timeout"});
  OtlpConfig& o = t.otlp;
  o.endpoint = m.String("endpoint", "");
  if (!o.endpoint.empty() && o.endpoint.rfind("http://", 0) != 0) {
    FailAt(m.KeyPath("endpoint"), "must start with http:// (got \"" + o.endpoint + "\")");
  }
  o.protocol = m.String("protocol", o.protocol);
  if (o.protocol != "http/protobuf" && o.protocol != "http/json") {
    FailAt(m.KeyPath("protocol"),
           "must be http/protobuf or http/json (got \"" + o.protocol + "\")");
  }
  o.sampling_ratio = m.Number("sampling_ratio", o.sampling_ratio, 0, 1);
  o.queue_size =
      static_cast<size_t>(m.Int("queue_size", static_cast<int64_t>(o.queue_size), 1, kMaxQueue));
  o.batch_size =
      static_cast<size_t>(m.Int("batch_size", static_cast<int64_t>(o.batch_size), 1, kMaxBatch));
  o.export_interval = m.Duration("export_interval", o.export_interval);
  if (o.export_interval.count() <= 0) FailAt(m.KeyPath("export_interval"), "must be positive");
  o.timeout = m.Duration("timeout", o.timeout);
  if (o.timeout.count() <= 0) FailAt(m.KeyPath("timeout"), "must be positive");
  const YAML::Node headers = m.Child("headers");
  if (headers.IsDefined() && !headers.IsNull()) {
    const std::string path = m.KeyPath("headers");
    if (!headers.IsMap()) FailAt(path, "expected a mapping of header name to value", headers);
    for (const auto& entry : headers) {
      const std::string name = entry.first.as<std::string>();
      if (!entry.second.IsScalar()) FailAt(path + "." + name, "expected a string", entry.second);
      o.headers.emplace_back(name,
                             SubstituteEnv(path + "." + name, entry.second.as<std::string>()));
    }
  }
  return t;
}

}  // namespace turnpike::config
