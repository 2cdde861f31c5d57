#include "common/base64.h"

#include <cstdint>
#include <cstring>

namespace turnpike {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr size_t kFloatBytes = 4;
constexpr size_t kGroupBytes = 3;  // each 3 input bytes are 4 output characters

// Encodes n (1..3) bytes as one 4-character group, padded with '='.
void AppendGroup(std::string& out, const unsigned char* in, size_t n) {
  const uint32_t b0 = in[0];
  const uint32_t b1 = n > 1 ? in[1] : 0;
  const uint32_t b2 = n > 2 ? in[2] : 0;
  const uint32_t group = (b0 << 16) | (b1 << 8) | b2;
  out.push_back(kAlphabet[(group >> 18) & 0x3f]);
  out.push_back(kAlphabet[(group >> 12) & 0x3f]);
  out.push_back(n > 1 ? kAlphabet[(group >> 6) & 0x3f] : '=');
  out.push_back(n > 2 ? kAlphabet[group & 0x3f] : '=');
}

}  // namespace

void AppendBase64(std::string& out, std::string_view bytes) {
  const auto* in = reinterpret_cast<const unsigned char*>(bytes.data());
  out.reserve(out.size() + (bytes.size() + kGroupBytes - 1) / kGroupBytes * 4);
  size_t i = 0;
  for (; i + kGroupBytes <= bytes.size(); i += kGroupBytes) AppendGroup(out, in + i, kGroupBytes);
  if (i < bytes.size()) AppendGroup(out, in + i, bytes.size() - i);
}

void AppendFloat32Base64(std::string& out, const float* values, size_t count) {
  // Serialised explicitly little-endian, so a big-endian host writes the same bytes.
  std::string bytes(count * kFloatBytes, '\0');
  for (size_t i = 0; i < count; ++i) {
    uint32_t bits = 0;
    std::memcpy(&bits, &values[i], kFloatBytes);
    for (size_t b = 0; b < kFloatBytes; ++b) {
      bytes[i * kFloatBytes + b] = static_cast<char>((bits >> (8 * b)) & 0xff);
    }
  }
  AppendBase64(out, bytes);
}

}  // namespace turnpike
