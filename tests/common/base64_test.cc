// Base64 against RFC 4648's test vectors, and the float32 little-endian encoding of OpenAI's
// embeddings (expected strings computed independently: Python's struct.pack('<f') + base64).
#include "common/base64.h"

#include <gtest/gtest.h>

namespace turnpike {
namespace {

std::string Encode(std::string_view bytes) {
  std::string out;
  AppendBase64(out, bytes);
  return out;
}

TEST(Base64, Rfc4648Vectors) {
  EXPECT_EQ(Encode(""), "");
  EXPECT_EQ(Encode("f"), "Zg==");
  EXPECT_EQ(Encode("fo"), "Zm8=");
  EXPECT_EQ(Encode("foo"), "Zm9v");
  EXPECT_EQ(Encode("foob"), "Zm9vYg==");
  EXPECT_EQ(Encode("fooba"), "Zm9vYmE=");
  EXPECT_EQ(Encode("foobar"), "Zm9vYmFy");
}

TEST(Base64, UsesPlusAndSlashForHighBytes) {
  EXPECT_EQ(Encode(std::string_view("\xfb\xff\xbf", 3)), "+/+/");
}

TEST(Base64, Float32LittleEndian) {
  const float two[] = {1.0f, -2.0f};  // 00 00 80 3f | 00 00 00 c0
  std::string out = "prefix:";
  AppendFloat32Base64(out, two, 2);
  EXPECT_EQ(out, "prefix:AACAPwAAAMA=");
  const float three[] = {0.5f, 0.25f, -0.125f};
  std::string exact;
  AppendFloat32Base64(exact, three, 3);
  EXPECT_EQ(exact, "AAAAPwAAgD4AAAC+");
}

}  // namespace
}  // namespace turnpike
