#include "wire/coding.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace libra::wire {
namespace {

std::vector<std::uint8_t> Bytes(const std::string& text) { return {text.begin(), text.end()}; }

TEST(CodingTest, FixedWidthFieldsAreLittleEndian) {
  ByteWriter w;
  w.Put<std::uint8_t>(0x01);
  w.Put<std::uint16_t>(0x0302);
  w.Put<std::uint32_t>(0x07060504);
  w.Put<std::uint64_t>(0x0f0e0d0c0b0a0908);
  w.Put<float>(1.0f);  // 0x3f800000
  const std::vector<std::uint8_t> expected = {1,  2,  3,  4,  5,  6, 7, 8,    9,   10,
                                              11, 12, 13, 14, 15, 0, 0, 0x80, 0x3f};
  EXPECT_EQ(Bytes(w.bytes()), expected);

  ByteReader r(w.bytes());
  std::uint8_t a = 0;
  std::uint16_t b = 0;
  std::uint32_t c = 0;
  std::uint64_t d = 0;
  float f = 0;
  ASSERT_TRUE(r.Get(&a) && r.Get(&b) && r.Get(&c) && r.Get(&d) && r.Get(&f));
  EXPECT_EQ(a, 0x01);
  EXPECT_EQ(b, 0x0302);
  EXPECT_EQ(c, 0x07060504u);
  EXPECT_EQ(d, 0x0f0e0d0c0b0a0908u);
  EXPECT_EQ(f, 1.0f);
  EXPECT_TRUE(r.AtEnd());
  EXPECT_FALSE(r.truncated());
}

TEST(CodingTest, BigEndianAccessorsAreNetworkOrder) {
  std::uint8_t p[8];
  StoreBig16(p, 0x0102);
  EXPECT_EQ(p[0], 1);
  EXPECT_EQ(p[1], 2);
  EXPECT_EQ(LoadBig16(p), 0x0102);
  StoreBig32(p, 0x01020304);
  EXPECT_EQ(p[3], 4);
  EXPECT_EQ(LoadBig32(p), 0x01020304u);
  StoreBig64(p, 0x0102030405060708);
  EXPECT_EQ(p[0], 1);
  EXPECT_EQ(p[7], 8);
  EXPECT_EQ(LoadBig64(p), 0x0102030405060708u);
  StoreLittle<std::int32_t>(p, -2);
  EXPECT_EQ(p[0], 0xfe);
  EXPECT_EQ(p[3], 0xff);
  EXPECT_EQ(LoadLittle<std::int32_t>(p), -2);
}

TEST(CodingTest, ReadPastTheEndFailsAndReportsTruncation) {
  ByteWriter w;
  w.Put<std::uint16_t>(7);
  ByteReader r(w.bytes());
  std::uint32_t wide = 99;
  EXPECT_FALSE(r.Get(&wide));
  EXPECT_EQ(wide, 99u);  // untouched
  EXPECT_TRUE(r.truncated());
  EXPECT_EQ(r.position(), 0u);  // the failed read took nothing
  std::uint16_t narrow = 0;
  EXPECT_TRUE(r.Get(&narrow));
  EXPECT_EQ(narrow, 7);
  EXPECT_FALSE(r.Skip(1));
}

TEST(CodingTest, StringsAndListsRoundTrip) {
  ByteWriter w;
  w.PutString("hot");
  w.PutList(std::vector<std::uint64_t>{1, 2, 3});
  w.PutList(std::vector<float>{0.5f, -1.0f});
  EXPECT_EQ(w.size(), 4 + 3 + 8 + 3 * 8 + 8 + 2 * 4);
  ByteReader r(w.bytes());
  std::string text;
  std::vector<std::uint64_t> keys;
  std::vector<float> vals;
  ASSERT_TRUE(r.GetString(&text) && r.GetList(&keys) && r.GetList(&vals));
  EXPECT_EQ(text, "hot");
  EXPECT_EQ(keys, (std::vector<std::uint64_t>{1, 2, 3}));
  EXPECT_EQ(vals, (std::vector<float>{0.5f, -1.0f}));
  EXPECT_TRUE(r.AtEnd());
}

TEST(CodingTest, LengthsTheBytesCannotHoldAreRefused) {
  ByteWriter w;
  w.Put<std::uint32_t>(10);  // a string of 10 bytes, 2 follow
  w.PutBytes("ab", 2);
  std::string text;
  ByteReader r(w.bytes());
  EXPECT_FALSE(r.GetString(&text));
  EXPECT_TRUE(r.truncated());

  ByteReader capped(std::string_view("\x02\x00\x00\x00xy", 6));
  EXPECT_FALSE(capped.GetString(&text, 1));  // longer than allowed
  EXPECT_TRUE(capped.GetString(&text, 2));
  EXPECT_EQ(text, "xy");

  ByteWriter list;
  list.Put<std::uint64_t>(std::numeric_limits<std::uint64_t>::max());  // a damaged count
  std::vector<float> vals;
  ByteReader lr(list.bytes());
  EXPECT_FALSE(lr.GetList(&vals));
  EXPECT_TRUE(vals.empty());
}

TEST(CodingTest, VarintsAreLeb128AndCanonical) {
  ByteWriter w;
  w.PutVarint(0);
  w.PutVarint(127);
  w.PutVarint(128);
  w.PutVarint(std::numeric_limits<std::uint64_t>::max());
  const std::vector<std::uint8_t> head = {0x00, 0x7f, 0x80, 0x01};
  EXPECT_EQ(std::vector<std::uint8_t>(w.bytes().begin(), w.bytes().begin() + 4), head);
  EXPECT_EQ(w.size(), 4u + 10u);
  ByteReader r(w.bytes());
  std::uint64_t v = 1;
  ASSERT_TRUE(r.GetVarint(&v));
  EXPECT_EQ(v, 0u);
  ASSERT_TRUE(r.GetVarint(&v));
  EXPECT_EQ(v, 127u);
  ASSERT_TRUE(r.GetVarint(&v));
  EXPECT_EQ(v, 128u);
  std::uint32_t narrow = 0;
  EXPECT_FALSE(r.GetVarint32(&narrow));  // does not fit 32 bits
  ASSERT_TRUE(r.GetVarint(&v));
  EXPECT_EQ(v, std::numeric_limits<std::uint64_t>::max());
  EXPECT_TRUE(r.AtEnd());

  std::uint64_t out = 0;
  ByteReader overlong(std::string_view("\x80\x00", 2));
  EXPECT_FALSE(overlong.GetVarint(&out));
  ByteReader unfinished(std::string_view("\x80", 1));
  EXPECT_FALSE(unfinished.GetVarint(&out));
  EXPECT_TRUE(unfinished.truncated());
  ByteReader too_wide(std::string_view("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 10));
  EXPECT_FALSE(too_wide.GetVarint(&out));
}

TEST(CodingTest, DeltasOfEitherSignStayShort) {
  ByteWriter w;
  w.PutDelta(100, 101);
  w.PutDelta(101, 99);
  w.PutDelta(0, std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(w.bytes()[0], 2);  // +1 -> zigzag 2
  EXPECT_EQ(w.bytes()[1], 3);  // -2 -> zigzag 3
  EXPECT_EQ(w.bytes()[2], 1);  // -1 -> zigzag 1
  ByteReader r(w.bytes());
  std::uint64_t v = 0;
  ASSERT_TRUE(r.GetDelta(100, &v));
  EXPECT_EQ(v, 101u);
  ASSERT_TRUE(r.GetDelta(101, &v));
  EXPECT_EQ(v, 99u);
  ASSERT_TRUE(r.GetDelta(0, &v));
  EXPECT_EQ(v, std::numeric_limits<std::uint64_t>::max());
}

TEST(CodingTest, ArraysRoundTrip) {
  const std::vector<std::uint64_t> keys = {5, 1ull << 40};
  ByteWriter w;
  w.PutArray(std::span<const std::uint64_t>(keys));
  EXPECT_EQ(w.bytes()[0], 5);
  EXPECT_EQ(static_cast<std::uint8_t>(w.bytes()[8 + 5]), 1);
  std::vector<std::uint64_t> back(2);
  ByteReader r(w.bytes());
  ASSERT_TRUE(r.GetArray(std::span<std::uint64_t>(back)));
  EXPECT_EQ(back, keys);
  std::vector<std::uint64_t> more(1);
  EXPECT_FALSE(r.GetArray(std::span<std::uint64_t>(more)));
}

}  // namespace
}  // namespace libra::wire
