#include "doors/search/qdrant/layout.h"

#include <openssl/sha.h>

#include <array>
#include <cstdio>

namespace turnpike::search::qdrant {

std::string CollectionName(std::string_view tenant, std::string_view index) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "t";
  for (unsigned char c : tenant) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '-' || c == '.';
    if (plain) {
      out.push_back(static_cast<char>(c));
      continue;
    }
    out.push_back('~');
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 0xF]);
  }
  // The tenant part has no '_' (escaped above), so the first "__" is the separator whatever
  // the index name holds.
  out += "__";
  out += index;
  return out;
}

std::optional<std::pair<std::string, std::string>> ParseCollectionName(std::string_view name) {
  const size_t separator = name.find("__");
  if (name.size() < 2 || name[0] != 't' || separator == std::string_view::npos ||
      separator + 2 == name.size()) {
    return std::nullopt;
  }
  const auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  std::string tenant;
  for (size_t i = 1; i < separator; ++i) {
    const char c = name[i];
    if (c != '~') {
      tenant.push_back(c);
      continue;
    }
    const int high = i + 2 < separator ? hex(name[i + 1]) : -1;
    const int low = high >= 0 ? hex(name[i + 2]) : -1;
    if (low < 0) return std::nullopt;
    tenant.push_back(static_cast<char>(high * 16 + low));
    i += 2;
  }
  if (tenant.empty() || CollectionName(tenant, name.substr(separator + 2)) != name) {
    return std::nullopt;  // not in CollectionName's one spelling of it
  }
  return std::make_pair(std::move(tenant), std::string(name.substr(separator + 2)));
}

std::string PointId(std::string_view tenant, std::string_view index, std::string_view id) {
  // Length-prefixed, so no byte inside a name can move the boundary between the three.
  std::string input = std::to_string(tenant.size()) + ':';
  input.append(tenant);
  input += std::to_string(index.size()) + ':';
  input.append(index);
  input.append(id);
  std::array<unsigned char, SHA_DIGEST_LENGTH> digest{};
  SHA1(reinterpret_cast<const unsigned char*>(input.data()), input.size(), digest.data());
  digest[6] = static_cast<unsigned char>((digest[6] & 0x0F) | 0x50);  // version 5
  digest[8] = static_cast<unsigned char>((digest[8] & 0x3F) | 0x80);  // RFC 4122 variant
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(36);
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out.push_back('-');
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 0xF]);
  }
  return out;
}

std::string FieldKey(std::string_view path) {
  std::string key(kFieldsKey);
  key.push_back('.');
  key.append(path);
  return key;
}

std::string_view IndexType(FieldType type) {
  switch (type) {
    case FieldType::kKeyword:
      return "keyword";
    case FieldType::kText:
      return "text";
    case FieldType::kLong:
    case FieldType::kDate:
      return "integer";
    case FieldType::kDouble:
      return "float";
    case FieldType::kBoolean:
      return "bool";
    case FieldType::kDenseVector:
      return "";
  }
  return "";
}

std::string_view DistanceName(Similarity similarity) {
  switch (similarity) {
    case Similarity::kCosine:
      return "Cosine";
    case Similarity::kDotProduct:
      return "Dot";
    case Similarity::kL2Norm:
      return "Euclid";
  }
  return "Cosine";
}

double EsScore(Similarity similarity, double qdrant_score) {
  if (similarity == Similarity::kL2Norm) return 1.0 / (1.0 + qdrant_score * qdrant_score);
  return (1.0 + qdrant_score) / 2.0;
}

}  // namespace turnpike::search::qdrant
