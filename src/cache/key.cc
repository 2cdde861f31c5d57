#include "cache/key.h"

#include <openssl/evp.h>
#include <xxhash.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

// The 32 hex characters of a digest: with SSE2, all 16 bytes at once (a handful of vector
// instructions, against some 250 for the byte loop; every miss makes a key).
void AppendDigestHex(std::string& out, const Digest128& digest) {
  char hex[sizeof(Digest128) * 2];
#if defined(__SSE2__)
  const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(digest.data()));
  const __m128i low_nibble = _mm_set1_epi8(0x0f);
  const __m128i high = _mm_and_si128(_mm_srli_epi16(bytes, 4), low_nibble);
  const __m128i low = _mm_and_si128(bytes, low_nibble);
  // Each nibble n as '0' + n, plus 'a' - '0' - 10 where n > 9.
  auto to_hex = [](__m128i nibbles) {
    const __m128i letters =
        _mm_and_si128(_mm_cmpgt_epi8(nibbles, _mm_set1_epi8(9)), _mm_set1_epi8('a' - '0' - 10));
    return _mm_add_epi8(_mm_add_epi8(nibbles, _mm_set1_epi8('0')), letters);
  };
  const __m128i high_hex = to_hex(high);
  const __m128i low_hex = to_hex(low);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(hex), _mm_unpacklo_epi8(high_hex, low_hex));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(hex + 16), _mm_unpackhi_epi8(high_hex, low_hex));
#else
  static constexpr char kHex[] = "0123456789abcdef";
  for (size_t i = 0; i < digest.size(); ++i) {
    hex[2 * i] = kHex[digest[i] >> 4];
    hex[2 * i + 1] = kHex[digest[i] & 0xf];
  }
#endif
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

namespace {

// "{<n>:" precedes the tenant's bytes in a namespace id.
uint32_t TenantOffset(std::string_view ns_id) { return static_cast<uint32_t>(ns_id.find(':') + 1); }

// Completes a key whose id holds its namespace id: the digest, the tenant's place, the hash.
void FinishKey(CacheKey& key, uint32_t tenant_length, const Digest128& digest) {
  key.ns_length = static_cast<uint32_t>(key.id.size());
  key.id.push_back(':');
  AppendDigestHex(key.id, digest);
  key.tenant_offset = TenantOffset(key.id);
  key.tenant_length = tenant_length;
  key.hash = IdHash(key.id);
}

}  // namespace

CacheKey MakeKey(std::string_view tenant, std::string_view ns, const Digest128& digest) {
  CacheKey key;
  key.id.reserve(tenant.size() + ns.size() + kNamespaceFraming + 1 + digest.size() * 2);
  AppendNamespaceId(key.id, tenant, ns);
  FinishKey(key, static_cast<uint32_t>(tenant.size()), digest);
  return key;
}

void KeySpace::Assign(std::string_view tenant, std::string_view ns) {
  ns_id.clear();
  AppendNamespaceId(ns_id, tenant, ns);
  tenant_offset = TenantOffset(ns_id);
  tenant_length = static_cast<uint32_t>(tenant.size());
}

CacheKey MakeKey(const KeySpace& space, const Digest128& digest, std::string storage) {
  CacheKey key;
  key.id = std::move(storage);
  key.id.clear();
  key.id.reserve(space.ns_id.size() + 1 + digest.size() * 2);
  key.id.append(space.ns_id);
  FinishKey(key, space.tenant_length, digest);
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
