#include "cache/key.h"

#include <openssl/evp.h>
#include <xxhash.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>

namespace turnpike::cache {
namespace {

void AppendPrefixed(std::string& out, std::string_view part) {
  char digits[24];
  const auto [end, ec] = std::to_chars(digits, digits + sizeof(digits), part.size());
  out.append(digits, end);
  out.push_back(':');
  out += part;
}

// "{<tenant length>:<tenant><namespace length>:<namespace>}" (key.h).
void AppendNamespaceId(std::string& out, std::string_view tenant, std::string_view ns) {
  out.push_back('{');
  AppendPrefixed(out, tenant);
  AppendPrefixed(out, ns);
  out.push_back('}');
}

// Room for the two length prefixes' digits and the braces.
constexpr size_t kNamespaceFraming = 24;

void AppendDigestHex(std::string& out, const Digest128& digest) {
  static constexpr char kHex[] = "0123456789abcdef";
  char hex[sizeof(Digest128) * 2];
  for (size_t i = 0; i < digest.size(); ++i) {
    hex[2 * i] = kHex[digest[i] >> 4];
    hex[2 * i + 1] = kHex[digest[i] & 0xf];
  }
  out.append(hex, sizeof(hex));
}

}  // namespace

std::string DigestHex(const Digest128& digest) {
  std::string out;
  out.reserve(digest.size() * 2);
  AppendDigestHex(out, digest);
  return out;
}

std::string NamespaceId(std::string_view tenant, std::string_view ns) {
  std::string out;
  out.reserve(tenant.size() + ns.size() + kNamespaceFraming);
  AppendNamespaceId(out, tenant, ns);
  return out;
}

CacheKey MakeKey(std::string_view tenant, std::string_view ns, const Digest128& digest) {
  CacheKey key;
  key.id.reserve(tenant.size() + ns.size() + kNamespaceFraming + 1 + digest.size() * 2);
  AppendNamespaceId(key.id, tenant, ns);
  key.ns_length = static_cast<uint32_t>(key.id.size());
  key.id.push_back(':');
  AppendDigestHex(key.id, digest);
  // "{<n>:" precedes the tenant's bytes in id.
  key.tenant_offset = static_cast<uint32_t>(key.id.find(':') + 1);
  key.tenant_length = static_cast<uint32_t>(tenant.size());
  key.hash = IdHash(key.id);
  return key;
}

uint64_t IdHash(std::string_view id) { return XXH3_64bits(id.data(), id.size()); }

void Digester::MdFree::operator()(evp_md_st* md) const { EVP_MD_free(md); }
void Digester::CtxFree::operator()(evp_md_ctx_st* ctx) const { EVP_MD_CTX_free(ctx); }

Result<Digester> Digester::Create() {
  std::unique_ptr<evp_md_st, MdFree> md(EVP_MD_fetch(nullptr, "SHA256", nullptr));
  std::unique_ptr<evp_md_ctx_st, CtxFree> ctx(EVP_MD_CTX_new());
  if (!md || !ctx) return Error{ErrorCode::kInternal, "cannot set up SHA-256", ""};
  return Digester(std::move(md), std::move(ctx));
}

Digest128 Digester::Of(std::string_view text) {
  std::array<uint8_t, EVP_MAX_MD_SIZE> full;
  unsigned int size = 0;
  if (EVP_DigestInit_ex2(ctx_.get(), md_.get(), nullptr) != 1 ||
      EVP_DigestUpdate(ctx_.get(), text.data(), text.size()) != 1 ||
      EVP_DigestFinal_ex(ctx_.get(), full.data(), &size) != 1 || size < 16) {
    std::abort();  // a created context cannot fail on memory it owns
  }
  Digest128 out;
  std::copy_n(full.begin(), out.size(), out.begin());
  return out;
}

}  // namespace turnpike::cache
