#include "common/text_writer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

namespace turnpike {
namespace {

TEST(TextWriterTest, WritesPiecesAndDecimals) {
  char room[64];
  TextWriter w(room, sizeof room);
  w.Put("Content-Length: ");
  w.PutDecimal(std::numeric_limits<int64_t>::min());
  w.Put(' ');
  w.PutDecimal(uint64_t{0});
  w.Put(std::string_view());
  EXPECT_FALSE(w.overflowed());
  EXPECT_EQ(w.text(), "Content-Length: -9223372036854775808 0");
}

// A piece that does not fit is dropped whole, with every later one, and reported; nothing is
// written past the room.
TEST(TextWriterTest, APieceThatDoesNotFitIsDroppedAndReported) {
  char room[12] = {};
  room[sizeof room - 1] = '#';
  TextWriter w(room, sizeof room - 1);
  w.Put("0123456789");
  w.Put("ab");
  EXPECT_TRUE(w.overflowed());
  w.PutDecimal(uint64_t{1});
  w.Put("c");
  EXPECT_EQ(w.text(), "0123456789");
  EXPECT_EQ(room[sizeof room - 1], '#');
  TextWriter one(room, 1);
  one.PutDecimal(12345);
  EXPECT_TRUE(one.overflowed());
  EXPECT_EQ(one.size(), 0u);
}

// Too little room costs another writing into more room, never a wrong or cut text; the
// string's text is replaced, its capacity kept when it suffices.
TEST(TextWriterTest, WriteTextWritesAgainIntoMoreRoomWhenTheBoundIsShort) {
  const std::string long_value(300, 'v');
  int writings = 0;
  const auto write = [&](TextWriter& w) {
    ++writings;
    w.Put("x-long: ");
    w.Put(long_value);
    w.Put("\r\n");
  };
  std::string out = "old text";
  WriteText(out, 10, write);
  EXPECT_EQ(out, "x-long: " + long_value + "\r\n");
  EXPECT_GT(writings, 1);

  writings = 0;
  const size_t capacity = out.capacity();
  WriteText(out, 400, write);
  EXPECT_EQ(writings, 1);
  EXPECT_EQ(out, "x-long: " + long_value + "\r\n");
  EXPECT_EQ(out.capacity(), capacity);

  WriteText(out, 0, [](TextWriter&) {});
  EXPECT_EQ(out, "");
}

}  // namespace
}  // namespace turnpike
