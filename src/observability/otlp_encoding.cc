// What both OTLP encodings share (otlp_encoding.h): the buffer, the semantic conventions'
// names, and the choice of encoder.
#include "observability/otlp_encoding.h"

#include <algorithm>
#include <cstring>

namespace turnpike::observability {

void OtlpBuffer::Grow(size_t n) {
  const size_t capacity = std::max(capacity_ * 2, size_ + n);
  auto data = std::make_unique_for_overwrite<char[]>(capacity);
  if (size_ > 0) std::memcpy(data.get(), data_.get(), size_);
  data_ = std::move(data);
  capacity_ = capacity;
}

std::string_view GenAiProviderName(std::string_view dialect) {
  if (dialect.rfind("openai", 0) == 0) return "openai";
  if (dialect == "gemini") return "gcp.gemini";
  return dialect;
}

std::string_view GenAiOperationName(std::string_view path) {
  // The chat endpoints first (the common case, no scan); then one pass over the path's
  // four-byte windows: "mbed" anywhere is embeddings (/embeddings, :embedContent, /v2/embed),
  // a "/completions" not after "chat" a text completion.
  if (path.ends_with("/chat/completions") || path.ends_with("/messages")) return "chat";
  const auto word = [&path](size_t i) {
    uint32_t w;
    std::memcpy(&w, path.data() + i, 4);
    return w;
  };
  const auto constant = [](const char(&s)[5]) {
    uint32_t w;
    std::memcpy(&w, s, 4);
    return w;
  };
  const uint32_t mbed = constant("mbed");
  const uint32_t com = constant("/com");
  bool completions = false;
  for (size_t i = 0; i + 4 <= path.size(); ++i) {
    const uint32_t w = word(i);
    if (w == mbed) return "embeddings";
    if (w == com && path.substr(i, 12) == "/completions" &&
        (i < 4 || word(i - 4) != constant("chat"))) {
      completions = true;
    }
  }
  return completions ? "text_completion" : "chat";
}

std::string_view EncodeOtlp(OtlpProtocol protocol, std::span<const SpanRecord> records,
                            std::string_view service_name, int64_t unix_offset_ns,
                            OtlpBuffer& out) {
  if (protocol == OtlpProtocol::kProtobuf) {
    return EncodeOtlpProtobuf(records, service_name, unix_offset_ns, out);
  }
  out.clear();
  EncodeOtlpJson(records, service_name, unix_offset_ns, out);
  return out.view();
}

}  // namespace turnpike::observability
