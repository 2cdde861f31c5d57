#include "doors/webhooks/signature.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <algorithm>
#include <array>

#include "common/base64.h"

namespace turnpike::webhooks {

namespace {

constexpr size_t kSecretBytes = 32;
constexpr int kJitterDivisor = 4;
constexpr int kMaxDoublings = 30;  // 2^30 x base is past any cap

// Decodes standard base64 (padding optional); false on any other character.
bool DecodeBase64(std::string_view text, std::string& out) {
  uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    int v;
    if (c >= 'A' && c <= 'Z') {
      v = c - 'A';
    } else if (c >= 'a' && c <= 'z') {
      v = c - 'a' + 26;
    } else if (c >= '0' && c <= '9') {
      v = c - '0' + 52;
    } else if (c == '+') {
      v = 62;
    } else if (c == '/') {
      v = 63;
    } else if (c == '=') {
      break;
    } else {
      return false;
    }
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  return true;
}

}  // namespace

std::string MintSecret() {
  std::array<unsigned char, kSecretBytes> bytes{};
  RAND_bytes(bytes.data(), static_cast<int>(bytes.size()));
  std::string secret(kSecretPrefix);
  AppendBase64(secret, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  return secret;
}

std::string SecretKey(std::string_view secret) {
  if (secret.substr(0, kSecretPrefix.size()) == kSecretPrefix) {
    std::string key;
    if (DecodeBase64(secret.substr(kSecretPrefix.size()), key) && !key.empty()) return key;
  }
  return std::string(secret);
}

std::string Sign(std::string_view secret, std::string_view id, int64_t timestamp,
                 std::string_view body) {
  const std::string key = SecretKey(secret);
  std::string message;
  message.reserve(id.size() + body.size() + 24);
  message.append(id);
  message.push_back('.');
  message.append(std::to_string(timestamp));
  message.push_back('.');
  message.append(body);
  std::array<unsigned char, EVP_MAX_MD_SIZE> mac{};
  unsigned int mac_size = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac.data(),
       &mac_size);
  std::string header = "v1,";
  AppendBase64(header, std::string_view(reinterpret_cast<const char*>(mac.data()), mac_size));
  return header;
}

std::chrono::milliseconds Backoff(int attempts, std::chrono::milliseconds base,
                                  std::chrono::milliseconds cap, uint32_t random) {
  const int doublings = std::clamp(attempts - 1, 0, kMaxDoublings);
  int64_t delay = base.count();
  for (int i = 0; i < doublings && delay < cap.count(); ++i) delay *= 2;
  delay = std::min<int64_t>(delay, cap.count());
  const int64_t jitter_range = delay / kJitterDivisor;
  const int64_t jitter =
      jitter_range == 0 ? 0
                        : static_cast<int64_t>(random % static_cast<uint64_t>(jitter_range + 1));
  return std::chrono::milliseconds(delay + jitter);
}

}  // namespace turnpike::webhooks
