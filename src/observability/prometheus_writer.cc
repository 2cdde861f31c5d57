// PrometheusWriter from metrics.h: text exposition format 0.0.4.
#include <algorithm>
#include <charconv>
#include <cmath>

#include "observability/metrics.h"

namespace turnpike::observability {
namespace {

constexpr size_t kNumberBufferSize = 32;

std::string_view TypeName(MetricType type) {
  switch (type) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
    case MetricType::kUntyped:
      break;
  }
  return "untyped";
}

void AppendNumber(std::string& out, double value) {
  if (std::isnan(value)) {
    out += "NaN";
  } else if (std::isinf(value)) {
    out += value > 0 ? "+Inf" : "-Inf";
  } else {
    char buf[kNumberBufferSize];
    auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);
    out.append(buf, end);
  }
}

void AppendInteger(std::string& out, uint64_t value) {
  char buf[kNumberBufferSize];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);
  out.append(buf, end);
}

// Label values escape backslash, double quote and newline; help text only backslash and
// newline.
void AppendEscaped(std::string& out, std::string_view text, bool escape_quote) {
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && escape_quote) {
      out += "\\\"";
    } else {
      out += c;
    }
  }
}

}  // namespace

void PrometheusWriter::Family(std::string_view name, std::string_view help, MetricType type) {
  if (std::find(families_.begin(), families_.end(), name) != families_.end()) return;
  families_.emplace_back(name);
  out_ += "# HELP ";
  out_ += name;
  out_ += ' ';
  AppendEscaped(out_, help, /*escape_quote=*/false);
  out_ += "\n# TYPE ";
  out_ += name;
  out_ += ' ';
  out_ += TypeName(type);
  out_ += '\n';
}

void PrometheusWriter::AppendLabels(std::span<const Label> labels, std::string_view le) {
  if (labels.empty() && le.empty()) return;
  out_ += '{';
  bool first = true;
  for (const Label& label : labels) {
    if (!first) out_ += ',';
    first = false;
    out_ += label.name;
    out_ += "=\"";
    AppendEscaped(out_, label.value, /*escape_quote=*/true);
    out_ += '"';
  }
  if (!le.empty()) {
    if (!first) out_ += ',';
    out_ += "le=\"";
    out_ += le;
    out_ += '"';
  }
  out_ += '}';
}

void PrometheusWriter::Sample(std::string_view name, std::span<const Label> labels, double value) {
  out_ += name;
  AppendLabels(labels, {});
  out_ += ' ';
  AppendNumber(out_, value);
  out_ += '\n';
}

void PrometheusWriter::WriteHistogram(std::string_view name, std::span<const Label> labels,
                                      const HistogramSnapshot& snapshot) {
  uint64_t cumulative = 0;
  std::string le;
  // A default-constructed snapshot has no buckets; still emit the mandatory +Inf bucket.
  const size_t buckets = std::max<size_t>(snapshot.counts.size(), 1);
  for (size_t i = 0; i < buckets; ++i) {
    if (i < snapshot.counts.size()) cumulative += snapshot.counts[i];
    le.clear();
    if (i < snapshot.upper_bounds.size() && i + 1 < buckets) {
      AppendNumber(le, snapshot.upper_bounds[i]);
    } else {
      le = "+Inf";
    }
    out_ += name;
    out_ += "_bucket";
    AppendLabels(labels, le);
    out_ += ' ';
    AppendInteger(out_, cumulative);
    out_ += '\n';
  }
  out_ += name;
  out_ += "_sum";
  AppendLabels(labels, {});
  out_ += ' ';
  AppendNumber(out_, snapshot.sum);
  out_ += '\n';
  out_ += name;
  out_ += "_count";
  AppendLabels(labels, {});
  out_ += ' ';
  AppendInteger(out_, cumulative);  // equal to the +Inf bucket even if count is stale
  out_ += '\n';
}

std::string PrometheusWriter::Take() {
  families_.clear();
  std::string out = std::move(out_);
  out_.clear();
  return out;
}

}  // namespace turnpike::observability
