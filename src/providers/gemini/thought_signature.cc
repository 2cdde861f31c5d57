#include "providers/gemini/thought_signature.h"

namespace turnpike::providers::gemini {
namespace {

constexpr size_t kQuantum = 4;     // base64 writes characters in groups of four
constexpr size_t kMaxPadding = 2;  // '=' characters that can end a group

bool IsAlnum(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

// A length no base64 text has: one character left over after the groups of four.
bool ImpossibleLength(size_t characters) { return characters % kQuantum == 1; }

}  // namespace

bool IsSignature(std::string_view escaped) {
  size_t characters = 0;
  size_t padding = 0;
  for (size_t i = 0; i < escaped.size(); ++i) {
    char c = escaped[i];
    if (c == '\\' && i + 1 < escaped.size() && escaped[i + 1] == '/') c = escaped[++i];
    if (c == '=') {
      ++padding;
      continue;
    }
    const bool digit = IsAlnum(c) || c == '+' || c == '/' || c == '-' || c == '_';
    if (!digit || padding > 0) return false;  // padding only at the end
    ++characters;
  }
  if (characters == 0 || ImpossibleLength(characters)) return false;
  return padding == 0 || (padding <= kMaxPadding && (characters + padding) % kQuantum == 0);
}

void MakeClientId(std::string& id, std::string_view signature) {
  // A plain id never contains the separator, so that the first one in an id is ours.
  for (size_t at = id.find(kSignatureSeparator); at != std::string::npos;
       at = id.find(kSignatureSeparator, at + 1)) {
    id[at] = '-';
  }
  if (signature.empty()) return;
  id.append(kSignatureSeparator);
  for (const char c : signature) {
    if (c == '\\') continue;  // "\/": the '/' follows
    if (c == '=') break;      // padding is implied by the length
    id.push_back(c == '+' ? '-' : c == '/' ? '_' : c);
  }
}

std::optional<CallId> SplitCallId(std::string_view id) {
  const size_t at = id.find(kSignatureSeparator);
  if (at == std::string_view::npos) return CallId{id, {}};
  const std::string_view segment = id.substr(at + kSignatureSeparator.size());
  if (segment.empty() || ImpossibleLength(segment.size())) return std::nullopt;
  CallId split{id.substr(0, at), {}};
  split.signature.reserve(segment.size() + kMaxPadding + 1);
  for (const char c : segment) {
    if (!IsAlnum(c) && c != '-' && c != '_') return std::nullopt;
    split.signature.push_back(c == '-' ? '+' : c == '_' ? '/' : c);
  }
  while (split.signature.size() % kQuantum != 0) split.signature.push_back('=');
  return split;
}

}  // namespace turnpike::providers::gemini
