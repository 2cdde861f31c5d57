// Standard base64 (RFC 4648 section 4: '+' '/', '=' padding), and the little-endian float32
// encoding that OpenAI's embeddings API returns for `encoding_format: "base64"` (the bytes of
// each IEEE-754 float32 in little-endian order, back to back, then base64).
//
// Pure functions appending to a caller-owned string; thread-safe. No errors.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace turnpike {

// Appends the base64 encoding of `bytes` (padded).
void AppendBase64(std::string& out, std::string_view bytes);

// Appends base64(float32 LE bytes of values[0..count)), independent of the host's byte order.
void AppendFloat32Base64(std::string& out, const float* values, size_t count);

}  // namespace turnpike
