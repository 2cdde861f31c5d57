#include "http/response_headers.h"

#include <boost/beast/core/string.hpp>
#include <charconv>
#include <cstring>

namespace turnpike::http {

void ResponseHeaders::Add(std::string_view name, std::string_view value) { Append(name, value); }

void ResponseHeaders::Add(std::string_view name, int64_t value) {
  char text[24];
  const char* end = std::to_chars(text, text + sizeof(text), value).ptr;
  Append(name, std::string_view(text, static_cast<size_t>(end - text)));
}

void ResponseHeaders::AddLines(std::string_view lines) { Append(lines); }

void ResponseHeaders::Spill(size_t more) {
  if (spilled_) return;
  spill_.reserve(2 * (size_ + more));
  spill_.assign(inline_.data(), size_);
  spilled_ = true;
}

void ResponseHeaders::Append(std::string_view name, std::string_view value) {
  const size_t line = name.size() + value.size() + 4;
  if (spilled_ || size_ + line > inline_.size()) {
    Spill(line);
    spill_.append(name).append(": ").append(value).append("\r\n");
    return;
  }
  char* out = inline_.data() + size_;
  std::memcpy(out, name.data(), name.size());
  out += name.size();
  std::memcpy(out, ": ", 2);
  out += 2;
  std::memcpy(out, value.data(), value.size());
  out += value.size();
  std::memcpy(out, "\r\n", 2);
  size_ += line;
}

void ResponseHeaders::Append(std::string_view text) {
  if (spilled_ || size_ + text.size() > inline_.size()) {
    Spill(text.size());
    spill_.append(text);
    return;
  }
  std::memcpy(inline_.data() + size_, text.data(), text.size());
  size_ += text.size();
}

std::string_view ResponseHeaders::Find(std::string_view name) const {
  std::string_view rest = lines();
  while (!rest.empty()) {
    const size_t eol = rest.find("\r\n");
    const std::string_view line = rest.substr(0, eol);
    rest.remove_prefix(eol + 2);
    const size_t colon = line.find(": ");
    if (boost::beast::iequals(line.substr(0, colon), name)) return line.substr(colon + 2);
  }
  return {};
}

}  // namespace turnpike::http
