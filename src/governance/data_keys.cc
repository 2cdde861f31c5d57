#include "governance/data_keys.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <memory>

namespace turnpike::governance {
namespace {

using CipherCtx = std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)>;

CipherCtx NewCtx() { return CipherCtx(EVP_CIPHER_CTX_new(), &EVP_CIPHER_CTX_free); }

Error Internal(std::string message) { return Error{ErrorCode::kInternal, std::move(message), ""}; }
Error Invalid(std::string message) {
  return Error{ErrorCode::kInvalidRequest, std::move(message), ""};
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

int Base64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

const unsigned char* Bytes(std::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

}  // namespace

Result<std::string> DecodeBase64(std::string_view text) {
  while (!text.empty() && text.back() == '=') text.remove_suffix(1);
  std::string out;
  out.reserve(text.size() * 3 / 4);
  uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    const int v = Base64Value(c);
    if (v < 0) return Invalid("not base64");
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  if (bits >= 6) return Invalid("not base64");  // a lone trailing character
  return out;
}

Result<DataKeys> DataKeys::Parse(std::string_view text) {
  DataKeys keys;
  size_t entry = 0;
  while (!text.empty()) {
    const size_t end = text.find_first_of(",\n");
    std::string_view item = Trim(text.substr(0, end));
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    if (item.empty() || item.front() == '#') continue;
    ++entry;
    const size_t colon = item.find(':');
    std::string id =
        colon == std::string_view::npos ? "1" : std::string(Trim(item.substr(0, colon)));
    const std::string_view encoded =
        colon == std::string_view::npos ? item : Trim(item.substr(colon + 1));
    const std::string where = "data key entry " + std::to_string(entry);
    if (id.empty()) return Invalid(where + ": empty key id");
    Result<std::string> bytes = DecodeBase64(encoded);
    if (!bytes.ok() || bytes->size() != kDataKeyBytes) {
      return Invalid(where + " (id " + id + "): expected 32 bytes in base64");
    }
    if (keys.Has(id)) return Invalid(where + ": key id " + id + " appears twice");
    keys.keys_.push_back(Key{std::move(id), std::move(bytes.value())});
  }
  if (keys.keys_.empty()) return Invalid("no data key given");
  return keys;
}

const DataKeys::Key* DataKeys::Find(std::string_view id) const {
  for (const Key& key : keys_) {
    if (key.id == id) return &key;
  }
  return nullptr;
}

Result<Sealed> DataKeys::Seal(std::string_view plaintext, std::string_view aad) const {
  if (keys_.empty()) return Internal("no data key is configured");
  const Key& key = keys_.front();
  Sealed sealed;
  sealed.key_id = key.id;
  sealed.nonce.resize(kNonceBytes);
  if (RAND_bytes(reinterpret_cast<unsigned char*>(sealed.nonce.data()), kNonceBytes) != 1) {
    return Internal("RAND_bytes failed");
  }
  CipherCtx ctx = NewCtx();
  int len = 0;
  sealed.ciphertext.resize(plaintext.size() + kTagBytes);
  auto* out = reinterpret_cast<unsigned char*>(sealed.ciphertext.data());
  if (!ctx || EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, kNonceBytes, nullptr) != 1 ||
      EVP_EncryptInit_ex(ctx.get(), nullptr, nullptr, Bytes(key.bytes), Bytes(sealed.nonce)) != 1 ||
      EVP_EncryptUpdate(ctx.get(), nullptr, &len, Bytes(aad), static_cast<int>(aad.size())) != 1 ||
      EVP_EncryptUpdate(ctx.get(), out, &len, Bytes(plaintext),
                        static_cast<int>(plaintext.size())) != 1) {
    return Internal("AES-256-GCM encryption failed");
  }
  int tail = 0;
  if (EVP_EncryptFinal_ex(ctx.get(), out + len, &tail) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, kTagBytes, out + plaintext.size()) !=
          1) {
    return Internal("AES-256-GCM encryption failed");
  }
  return sealed;
}

Result<std::string> DataKeys::Open(const Sealed& sealed, std::string_view aad) const {
  const Key* key = Find(sealed.key_id);
  if (key == nullptr) {
    return Internal("sealed under data key " + sealed.key_id + ", which is not configured");
  }
  const Error failed = Internal("a record sealed under data key " + sealed.key_id +
                                " does not open: altered, moved, or a different key");
  if (sealed.nonce.size() != kNonceBytes || sealed.ciphertext.size() < kTagBytes) return failed;
  const size_t size = sealed.ciphertext.size() - kTagBytes;
  std::string plaintext(size, '\0');
  std::string tag(sealed.ciphertext.substr(size));
  CipherCtx ctx = NewCtx();
  int len = 0;
  auto* out = reinterpret_cast<unsigned char*>(plaintext.data());
  if (!ctx || EVP_DecryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, kNonceBytes, nullptr) != 1 ||
      EVP_DecryptInit_ex(ctx.get(), nullptr, nullptr, Bytes(key->bytes), Bytes(sealed.nonce)) !=
          1 ||
      EVP_DecryptUpdate(ctx.get(), nullptr, &len, Bytes(aad), static_cast<int>(aad.size())) != 1 ||
      EVP_DecryptUpdate(ctx.get(), out, &len, Bytes(sealed.ciphertext), static_cast<int>(size)) !=
          1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, kTagBytes, tag.data()) != 1) {
    return failed;
  }
  int tail = 0;
  if (EVP_DecryptFinal_ex(ctx.get(), out + len, &tail) != 1) return failed;
  return plaintext;
}

}  // namespace turnpike::governance
