// Virtual keys: their format, generation, parsing, verification, and where a request carries
// one.
//
// Format: "tp-" + public id + "-" + secret, 59 characters (a tenant's admin token: "tpa-",
// 60 characters, the same parts; admin tokens are keys of their own kind, see snapshot.h):
//   public id  12 chars of the RFC 4648 base32 alphabet in lower case (a-z, 2-7): 60 random
//              bits, the lookup key; not secret (it appears in logs and the admin API).
//   secret     43 chars, unpadded base64url of 32 random bytes from OpenSSL's RAND_bytes.
// The parts sit at fixed offsets, so the split is unambiguous although base64url uses '-'.
//
// What is stored: the public id and SHA-256 over the secret's 43 ASCII characters (the text,
// not the decoded bytes: verification then needs no decoding, and a non-canonical spelling of
// the same bytes simply does not match). The full key is shown once, by GenerateKey, and never
// stored. Public ids are random, not checked for uniqueness here: the store's primary key is.
//
// Thread safety: free functions are thread-safe. A SecretVerifier is used by one thread (each
// worker owns one); it reuses an OpenSSL digest context, which makes hashing ~3x faster than
// the one-shot functions (~90 ns vs ~300 ns for one SHA-256 block with SHA-NI), and it
// remembers the secrets it verified recently (see SecretVerifier), so a key seen again costs
// a constant-time compare instead of a hash.
// Errors: GenerateKey and SecretVerifier::Create fail (kInternal) only if OpenSSL does.
// Secrets are compared with CRYPTO_memcmp (constant time); nothing here logs a secret.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

struct evp_md_st;      // EVP_MD
struct evp_md_ctx_st;  // EVP_MD_CTX

namespace turnpike::governance {

inline constexpr std::string_view kKeyPrefix = "tp-";
inline constexpr std::string_view kAdminTokenPrefix = "tpa-";
inline constexpr size_t kPublicIdLength = 12;
inline constexpr size_t kSecretBytes = 32;
inline constexpr size_t kSecretLength = 43;  // unpadded base64url of kSecretBytes
// The length of a key with `prefix`: prefix, public id, "-", secret.
constexpr size_t KeyLength(std::string_view prefix) {
  return prefix.size() + kPublicIdLength + 1 + kSecretLength;
}
inline constexpr size_t kKeyLength = KeyLength(kKeyPrefix);

using SecretHash = std::array<uint8_t, 32>;  // SHA-256

// The views of a key's two parts; they point into the string given to ParseKey.
struct ParsedKey {
  std::string_view public_id;
  std::string_view secret;
};

// Splits and checks the shape of a key with `prefix` (length, prefix, separator, alphabets). No
// allocation. nullopt: not a Turnpike key (the caller answers 401 without saying which part was
// wrong).
std::optional<ParsedKey> ParseKey(std::string_view key, std::string_view prefix = kKeyPrefix);

// True if `public_id` is 12 chars of the lower-case base32 alphabet.
bool IsValidPublicId(std::string_view public_id);

// What GenerateKey returns: `key` goes to the user once; the rest goes to the store.
struct GeneratedKey {
  std::string key;
  std::string public_id;
  SecretHash secret_hash;
};

// A new key: a random secret and, unless `public_id` is given (IdempotentPublicId), a random id.
Result<GeneratedKey> GenerateKey(std::string_view prefix = kKeyPrefix,
                                 std::string_view public_id = {});

// The id of the key a request with an Idempotency-Key makes: 60 bits of SHA-256 over the key's
// prefix (its kind), its tenant and the idempotency key, so that every retry of that request
// names the same id and the store's primary key lets one of them in, on any replica, whatever
// became of the others. Two different requests share an id with probability 2^-60 per pair (as
// random ids do); only the secret stays random. nullopt if OpenSSL fails.
std::optional<std::string> IdempotentPublicId(std::string_view prefix, std::string_view tenant,
                                              std::string_view idempotency_key);

// SHA-256 of `secret` with the one-shot API (admin paths, tests). nullopt if OpenSSL fails.
std::optional<SecretHash> HashSecret(std::string_view secret);

// Constant-time check of `secret` against a stored hash, one-shot API. False if OpenSSL fails.
bool VerifySecret(std::string_view secret, const SecretHash& stored_hash);

// The request path's verifier: owns a fetched SHA-256 implementation and a reusable context,
// and a small table of secrets it verified, by the stored hash they matched (kRememberedKeys
// slots, direct-mapped by the hash's first byte: the hash is uniformly random, and a collision
// only evicts). A secret presented again for the same stored hash is accepted when it equals
// the remembered one (CRYPTO_memcmp, constant time), which is the same proof as hashing it:
// only a secret that hashed to the stored hash was remembered. Anything else is hashed as
// before, so a wrong secret costs what it did, and answers the same. What is remembered is
// in-process only, never logged, and wiped (OPENSSL_cleanse) when the verifier is destroyed;
// the status checks (revoked, expired, suspended) run after Verify on every request, so the
// table never keeps a revoked key working.
// One per worker; movable, not copyable, not thread-safe.
class SecretVerifier {
 public:
  static Result<SecretVerifier> Create();
  SecretVerifier(SecretVerifier&&) = default;
  SecretVerifier& operator=(SecretVerifier&&) = default;
  ~SecretVerifier();

  // Whether SHA-256(secret) equals `stored_hash`, compared in constant time; false if OpenSSL
  // fails.
  bool Verify(std::string_view secret, const SecretHash& stored_hash);

  // Verifications answered from the table rather than by hashing (for tests).
  uint64_t remembered_hits() const { return remembered_hits_; }

  static constexpr size_t kRememberedKeys = 64;

 private:
  struct Remembered {
    SecretHash stored_hash{};
    std::array<char, kSecretLength> secret{};
    bool used = false;
  };

  struct MdFree {
    void operator()(evp_md_st* md) const;
  };
  struct CtxFree {
    void operator()(evp_md_ctx_st* ctx) const;
  };
  SecretVerifier(std::unique_ptr<evp_md_st, MdFree> md, std::unique_ptr<evp_md_ctx_st, CtxFree> ctx)
      : md_(std::move(md)), ctx_(std::move(ctx)) {}

  std::unique_ptr<evp_md_st, MdFree> md_;
  std::unique_ptr<evp_md_ctx_st, CtxFree> ctx_;
  std::array<Remembered, kRememberedKeys> remembered_{};
  uint64_t remembered_hits_ = 0;
};

// The credential a request presents, as a view into the header value: the token of
// `Authorization: Bearer <token>` (scheme case-insensitive, surrounding blanks trimmed), else
// the `x-api-key` value (Anthropic's header). Pass an empty view for an absent header.
// nullopt: no credential at all (401).
std::optional<std::string_view> ExtractApiKey(std::string_view authorization,
                                              std::string_view x_api_key);

}  // namespace turnpike::governance
