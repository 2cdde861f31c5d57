#include "governance/keys.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <algorithm>
#include <string>

namespace turnpike::governance {
namespace {

constexpr std::string_view kBase32Alphabet = "abcdefghijklmnopqrstuvwxyz234567";
constexpr std::string_view kBase64UrlAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
constexpr int kBase32Bits = 5;
constexpr int kBase64Bits = 6;
constexpr int kByteBits = 8;
constexpr uint32_t kBase32Mask = (1u << kBase32Bits) - 1;
constexpr uint32_t kBase64Mask = (1u << kBase64Bits) - 1;
constexpr size_t kPublicIdRandomBytes = 8;  // 64 bits drawn, 60 used
constexpr std::string_view kBearerScheme = "bearer";

// A 256-entry membership table, so a shape check is one load per character.
using CharTable = std::array<bool, 256>;

constexpr CharTable MakeTable(std::string_view alphabet) {
  CharTable table{};
  for (char c : alphabet) table[static_cast<unsigned char>(c)] = true;
  return table;
}

constexpr CharTable kBase32Chars = MakeTable(kBase32Alphabet);
constexpr CharTable kBase64UrlChars = MakeTable(kBase64UrlAlphabet);

// Without a branch per character: a key is checked on every request.
bool AllIn(std::string_view text, const CharTable& table) {
  bool all = true;
  for (char c : text) all &= table[static_cast<unsigned char>(c)];
  return all;
}

std::string EncodeBase64Url(const uint8_t* bytes, size_t size) {
  std::string out;
  uint32_t buffer = 0;
  int bits = 0;
  for (size_t i = 0; i < size; ++i) {
    buffer = (buffer << kByteBits) | bytes[i];
    bits += kByteBits;
    while (bits >= kBase64Bits) {
      bits -= kBase64Bits;
      out.push_back(kBase64UrlAlphabet[(buffer >> bits) & kBase64Mask]);
    }
  }
  if (bits > 0) out.push_back(kBase64UrlAlphabet[(buffer << (kBase64Bits - bits)) & kBase64Mask]);
  return out;
}

std::string EncodePublicId(const uint8_t* bytes) {
  uint64_t value = 0;
  for (size_t i = 0; i < kPublicIdRandomBytes; ++i) value = (value << kByteBits) | bytes[i];
  std::string out(kPublicIdLength, ' ');
  for (char& c : out) {
    c = kBase32Alphabet[value & kBase32Mask];
    value >>= kBase32Bits;
  }
  return out;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view lower) {
  if (a.size() != lower.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char c = a[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != lower[i]) return false;
  }
  return true;
}

std::string_view TrimBlanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool HashEquals(const SecretHash& a, const SecretHash& b) {
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace

bool IsValidPublicId(std::string_view public_id) {
  return public_id.size() == kPublicIdLength && AllIn(public_id, kBase32Chars);
}

std::optional<ParsedKey> ParseKey(std::string_view key, std::string_view prefix) {
  if (key.size() != KeyLength(prefix) || !key.starts_with(prefix)) return std::nullopt;
  const size_t separator_at = prefix.size() + kPublicIdLength;
  if (key[separator_at] != '-') return std::nullopt;
  ParsedKey parsed{key.substr(prefix.size(), kPublicIdLength), key.substr(separator_at + 1)};
  if (!IsValidPublicId(parsed.public_id) || !AllIn(parsed.secret, kBase64UrlChars)) {
    return std::nullopt;
  }
  return parsed;
}

Result<GeneratedKey> GenerateKey(std::string_view prefix, std::string_view public_id) {
  std::array<uint8_t, kSecretBytes + kPublicIdRandomBytes> random{};
  if (RAND_bytes(random.data(), static_cast<int>(random.size())) != 1) {
    return Error{ErrorCode::kInternal, "random number generator failed", ""};
  }
  GeneratedKey out;
  out.public_id =
      public_id.empty() ? EncodePublicId(random.data() + kSecretBytes) : std::string(public_id);
  std::string secret = EncodeBase64Url(random.data(), kSecretBytes);
  OPENSSL_cleanse(random.data(), random.size());
  std::optional<SecretHash> hash = HashSecret(secret);
  if (!hash) return Error{ErrorCode::kInternal, "SHA-256 failed", ""};
  out.secret_hash = *hash;
  out.key.reserve(KeyLength(prefix));
  out.key.append(prefix).append(out.public_id).append("-").append(secret);
  OPENSSL_cleanse(secret.data(), secret.size());
  return out;
}

std::optional<std::string> IdempotentPublicId(std::string_view prefix, std::string_view tenant,
                                              std::string_view idempotency_key) {
  // Each part after its length, so that no two (prefix, tenant, key) triples share an input.
  std::string input = "turnpike idempotent key id";
  for (std::string_view part : {prefix, tenant, idempotency_key}) {
    input.append(std::to_string(part.size())).append(":").append(part);
  }
  std::optional<SecretHash> digest = HashSecret(input);
  if (!digest) return std::nullopt;
  return EncodePublicId(digest->data());
}

std::optional<SecretHash> HashSecret(std::string_view secret) {
  SecretHash hash;
  unsigned int size = 0;
  if (EVP_Digest(secret.data(), secret.size(), hash.data(), &size, EVP_sha256(), nullptr) != 1) {
    return std::nullopt;
  }
  return hash;
}

bool VerifySecret(std::string_view secret, const SecretHash& stored_hash) {
  std::optional<SecretHash> hash = HashSecret(secret);
  return hash && HashEquals(*hash, stored_hash);
}

void SecretVerifier::MdFree::operator()(evp_md_st* md) const { EVP_MD_free(md); }
void SecretVerifier::CtxFree::operator()(evp_md_ctx_st* ctx) const { EVP_MD_CTX_free(ctx); }

Result<SecretVerifier> SecretVerifier::Create() {
  std::unique_ptr<evp_md_st, MdFree> md(EVP_MD_fetch(nullptr, "SHA256", nullptr));
  std::unique_ptr<evp_md_ctx_st, CtxFree> ctx(EVP_MD_CTX_new());
  if (!md || !ctx) return Error{ErrorCode::kInternal, "cannot set up SHA-256", ""};
  return SecretVerifier(std::move(md), std::move(ctx));
}

SecretVerifier::~SecretVerifier() { OPENSSL_cleanse(remembered_.data(), sizeof(remembered_)); }

bool SecretVerifier::Verify(std::string_view secret, const SecretHash& stored_hash) {
  Remembered& slot = remembered_[stored_hash[0] % kRememberedKeys];
  // The stored hash is not secret (it selects the slot); the secret is compared in constant
  // time, and only when the slot holds a secret of the same length for the same hash.
  const bool same_key = slot.used && slot.stored_hash == stored_hash;
  if (same_key && secret.size() == kSecretLength &&
      CRYPTO_memcmp(slot.secret.data(), secret.data(), kSecretLength) == 0) {
    ++remembered_hits_;
    return true;
  }
  SecretHash hash;
  unsigned int size = 0;
  if (EVP_DigestInit_ex2(ctx_.get(), md_.get(), nullptr) != 1 ||
      EVP_DigestUpdate(ctx_.get(), secret.data(), secret.size()) != 1 ||
      EVP_DigestFinal_ex(ctx_.get(), hash.data(), &size) != 1) {
    return false;
  }
  if (!HashEquals(hash, stored_hash)) return false;
  if (secret.size() == kSecretLength) {
    slot.stored_hash = stored_hash;
    std::copy(secret.begin(), secret.end(), slot.secret.begin());
    slot.used = true;
  }
  return true;
}

std::optional<std::string_view> ExtractApiKey(std::string_view authorization,
                                              std::string_view x_api_key) {
  std::string_view auth = TrimBlanks(authorization);
  if (auth.size() > kBearerScheme.size() &&
      EqualsIgnoreCase(auth.substr(0, kBearerScheme.size()), kBearerScheme) &&
      (auth[kBearerScheme.size()] == ' ' || auth[kBearerScheme.size()] == '\t')) {
    std::string_view token = TrimBlanks(auth.substr(kBearerScheme.size()));
    if (!token.empty()) return token;
  }
  std::string_view api_key = TrimBlanks(x_api_key);
  if (!api_key.empty()) return api_key;
  return std::nullopt;
}

}  // namespace turnpike::governance
