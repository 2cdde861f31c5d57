// DataKeys: the data keys that encrypt what the store keeps secret (tenants' provider API keys,
// BYOK), and the sealing itself: AES-256-GCM through OpenSSL's EVP interface.
//
// Keys: 32 random bytes each, base64, named by an id. Read once at start-up from
// `security.data_key_file` or, when that is not set, the environment variable
// TURNPIKE_DATA_KEY. Both hold one or more entries "<id>:<base64>" separated by newlines or
// commas ('#' starts a comment line); a bare "<base64>" is the key "1". The FIRST entry is the
// current key: every new seal uses it. The others are previous keys, kept so that records
// sealed under them still open. Rotation: put the new key first, keep the old ones after it,
// restart, re-seal every record (POST /admin/v1/provider-keys/rotate), then drop the old keys.
//
// A sealed record: the key id, a random 96-bit nonce (RAND_bytes, one per seal) and the
// ciphertext followed by its 128-bit tag. The additional authenticated data binds a record to
// where it belongs (the caller's: tenant id and deployment), so a row copied to another tenant
// or deployment, a flipped byte or a wrong key fails to open (kInternal, naming the key id,
// never the plaintext).
//
// Ownership and threads: immutable after Parse; Seal and Open are safe from any thread (each
// call makes its own cipher context).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace turnpike::governance {

inline constexpr size_t kDataKeyBytes = 32;
inline constexpr size_t kNonceBytes = 12;
inline constexpr size_t kTagBytes = 16;

struct Sealed {
  std::string key_id;
  std::string nonce;       // kNonceBytes raw bytes
  std::string ciphertext;  // the ciphertext, then the tag (kTagBytes), raw bytes
};

class DataKeys {
 public:
  // Parses the entries (see above). kInvalidRequest naming what is wrong (never a key's
  // bytes): no entry, a key that is not 32 bytes of base64, an id used twice.
  static Result<DataKeys> Parse(std::string_view text);

  bool empty() const { return keys_.empty(); }
  const std::string& current_id() const { return keys_.front().id; }
  bool Has(std::string_view id) const { return Find(id) != nullptr; }

  // Seals under the current key. kInternal when OpenSSL fails (or there is no key).
  Result<Sealed> Seal(std::string_view plaintext, std::string_view aad) const;
  // kInternal for an unknown key id, a wrong `aad`, or a record that was altered.
  Result<std::string> Open(const Sealed& sealed, std::string_view aad) const;

 private:
  struct Key {
    std::string id;
    std::string bytes;  // kDataKeyBytes
  };
  const Key* Find(std::string_view id) const;

  std::vector<Key> keys_;  // [0] is the current key
};

// The raw bytes of standard base64 (padding optional, no whitespace); nullopt-like error for
// anything else.
Result<std::string> DecodeBase64(std::string_view text);

}  // namespace turnpike::governance
