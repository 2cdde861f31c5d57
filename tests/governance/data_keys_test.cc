// DataKeys (governance/data_keys.h): parsing the keys, AES-256-GCM round trips, and every way a
// sealed record must fail to open: a flipped byte anywhere, another AAD, an unknown key id.
#include "governance/data_keys.h"

#include <gtest/gtest.h>

#include <string>

#include "common/base64.h"

namespace turnpike::governance {
namespace {

std::string KeyText(char fill) {
  std::string out;
  AppendBase64(out, std::string(kDataKeyBytes, fill));
  return out;
}

DataKeys MustParse(const std::string& text) {
  Result<DataKeys> keys = DataKeys::Parse(text);
  EXPECT_TRUE(keys.ok()) << (keys.ok() ? "" : keys.error().message);
  return keys.value();
}

constexpr std::string_view kSecret = "sk-tenant-secret-0123456789";
constexpr std::string_view kAad = std::string_view("acme\0gpt-4o", 11);

TEST(DataKeysTest, RoundTripUnderTheCurrentKey) {
  const DataKeys keys = MustParse("k2:" + KeyText('b') + "\nk1:" + KeyText('a'));
  EXPECT_EQ(keys.current_id(), "k2");
  Result<Sealed> sealed = keys.Seal(kSecret, kAad);
  ASSERT_TRUE(sealed.ok());
  EXPECT_EQ(sealed->key_id, "k2");
  EXPECT_EQ(sealed->nonce.size(), kNonceBytes);
  EXPECT_EQ(sealed->ciphertext.size(), kSecret.size() + kTagBytes);
  EXPECT_EQ(sealed->ciphertext.find(kSecret), std::string::npos);
  Result<std::string> opened = keys.Open(sealed.value(), kAad);
  ASSERT_TRUE(opened.ok());
  EXPECT_EQ(opened.value(), kSecret);
}

TEST(DataKeysTest, EachSealHasItsOwnNonce) {
  const DataKeys keys = MustParse(KeyText('a'));
  EXPECT_EQ(keys.current_id(), "1");
  Result<Sealed> a = keys.Seal(kSecret, kAad);
  Result<Sealed> b = keys.Seal(kSecret, kAad);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->nonce, b->nonce);
  EXPECT_NE(a->ciphertext, b->ciphertext);
}

TEST(DataKeysTest, AFlippedByteAnywhereFailsToOpen) {
  const DataKeys keys = MustParse("k1:" + KeyText('a'));
  Result<Sealed> sealed = keys.Seal(kSecret, kAad);
  ASSERT_TRUE(sealed.ok());
  int failures = 0;
  for (size_t i = 0; i < sealed->ciphertext.size(); ++i) {
    Sealed tampered = sealed.value();
    tampered.ciphertext[i] = static_cast<char>(tampered.ciphertext[i] ^ 0x01);
    failures += keys.Open(tampered, kAad).ok() ? 0 : 1;
  }
  for (size_t i = 0; i < sealed->nonce.size(); ++i) {
    Sealed tampered = sealed.value();
    tampered.nonce[i] = static_cast<char>(tampered.nonce[i] ^ 0x80);
    failures += keys.Open(tampered, kAad).ok() ? 0 : 1;
  }
  EXPECT_EQ(failures, static_cast<int>(sealed->ciphertext.size() + sealed->nonce.size()));
  Sealed cut = sealed.value();
  cut.ciphertext.pop_back();
  EXPECT_FALSE(keys.Open(cut, kAad).ok());
}

TEST(DataKeysTest, AnotherTenantsAadFailsAndTheErrorNamesNoSecret) {
  const DataKeys keys = MustParse("k1:" + KeyText('a'));
  Result<Sealed> sealed = keys.Seal(kSecret, kAad);
  ASSERT_TRUE(sealed.ok());
  Result<std::string> moved = keys.Open(sealed.value(), std::string_view("evil\0gpt-4o", 11));
  ASSERT_FALSE(moved.ok());
  EXPECT_EQ(moved.error().code, ErrorCode::kInternal);
  EXPECT_EQ(moved.error().message.find(kSecret), std::string::npos);
  EXPECT_FALSE(keys.Open(sealed.value(), std::string_view("acme\0gpt-4o-mini", 16)).ok());
}

TEST(DataKeysTest, RotationOpensOldRecordsAndSealsNewOnesUnderTheNewKey) {
  const DataKeys before = MustParse("k1:" + KeyText('a'));
  Result<Sealed> old_record = before.Seal(kSecret, kAad);
  ASSERT_TRUE(old_record.ok());
  const DataKeys after = MustParse("k2:" + KeyText('b') + ",k1:" + KeyText('a'));
  Result<std::string> opened = after.Open(old_record.value(), kAad);
  ASSERT_TRUE(opened.ok());
  Result<Sealed> resealed = after.Seal(opened.value(), kAad);
  ASSERT_TRUE(resealed.ok());
  EXPECT_EQ(resealed->key_id, "k2");
  // Once k1 is dropped, the old record no longer opens, the re-sealed one does.
  const DataKeys only_new = MustParse("k2:" + KeyText('b'));
  EXPECT_FALSE(only_new.Open(old_record.value(), kAad).ok());
  EXPECT_TRUE(only_new.Open(resealed.value(), kAad).ok());
  // The same id with other bytes (a key replaced without a new id) fails, it does not garble.
  const DataKeys wrong = MustParse("k2:" + KeyText('c'));
  EXPECT_FALSE(wrong.Open(resealed.value(), kAad).ok());
}

TEST(DataKeysTest, ParseRefusesBadEntries) {
  EXPECT_FALSE(DataKeys::Parse("").ok());
  EXPECT_FALSE(DataKeys::Parse("# only a comment\n").ok());
  EXPECT_FALSE(DataKeys::Parse("k1:c2hvcnQ=").ok());  // "short"
  EXPECT_FALSE(DataKeys::Parse("k1:" + KeyText('a') + "!").ok());
  EXPECT_FALSE(DataKeys::Parse("k1:" + KeyText('a') + ",k1:" + KeyText('b')).ok());
  EXPECT_FALSE(DataKeys::Parse(":" + KeyText('a')).ok());
  Result<DataKeys> spaced = DataKeys::Parse("# keys\n  k9 : " + KeyText('a') + "  \n\n");
  ASSERT_TRUE(spaced.ok());
  EXPECT_EQ(spaced->current_id(), "k9");
  const std::string key_text = KeyText('z');
  Result<DataKeys> bad = DataKeys::Parse("k1:" + key_text.substr(0, 20));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message.find(key_text.substr(0, 20)), std::string::npos);
}

}  // namespace
}  // namespace turnpike::governance
