// The shared text helpers of common/strings.h and common/printable.h that face strangers'
// text: UTF-8 checked and clipped on a character, control characters escaped for a terminal.

#include "common/strings.h"

#include <gtest/gtest.h>

namespace pgslow {
namespace {

TEST(Utf8, ValidTextAndEveryKindOfInvalidSequence) {
  EXPECT_TRUE(is_valid_utf8("plain"));
  EXPECT_TRUE(is_valid_utf8("Zoë → 日本 🎉"));
  EXPECT_FALSE(is_valid_utf8("\xff"));
  EXPECT_FALSE(is_valid_utf8("\xc3"));              // cut short
  EXPECT_FALSE(is_valid_utf8("\xc3\x28"));          // a bad continuation
  EXPECT_FALSE(is_valid_utf8("\xe0\x80\xaf"));      // overlong
  EXPECT_FALSE(is_valid_utf8("\xed\xa0\x80"));      // a surrogate
  EXPECT_FALSE(is_valid_utf8("\xf4\x90\x80\x80"));  // above U+10FFFF
}

TEST(Utf8, ClippingNeverSplitsACharacter) {
  EXPECT_EQ(clip_utf8("abc", 10), "abc");
  EXPECT_EQ(clip_utf8("abc", 2), "ab");
  EXPECT_EQ(clip_utf8("a\xc3\xa9", 2), "a");         // "é" does not fit whole
  EXPECT_EQ(clip_utf8("\xf0\x9f\x8e\x89x", 3), "");  // nor a 4-byte emoji
  EXPECT_EQ(clip_utf8("\xf0\x9f\x8e\x89x", 5), "\xf0\x9f\x8e\x89x");
  std::string accented;
  for (int i = 0; i < 150; ++i) accented += "\xc3\xa9";
  const std::string clipped = clip_utf8("Z" + accented, 200);
  EXPECT_EQ(clipped.size(), 199u);
  EXPECT_TRUE(is_valid_utf8(clipped));
}

TEST(Printable, DelC1AndBidirectionalOverridesAreEscaped) {
  // DEL, U+009B (CSI: starts an escape sequence), U+202E (right-to-left override).
  EXPECT_EQ(printable("Eve\x7f"), "Eve\\x7f");
  EXPECT_EQ(printable("Eve\xc2\x9b"
                      "31m"),
            "Eve\\x9b31m");
  EXPECT_EQ(printable("Eve\xe2\x80\xae"
                      "txt.exe"),
            "Eve\\u202etxt.exe");
  EXPECT_EQ(printable("\xe2\x81\xa6x\xe2\x80\x8f"), "\\u2066x\\u200f");
  EXPECT_TRUE(has_control_characters("a\xe2\x80\xae"));
  // Other UTF-8 stays, the same lead bytes included.
  EXPECT_EQ(printable("→ … —"), "→ … —");
  EXPECT_FALSE(has_control_characters("→ … —"));
}

}  // namespace
}  // namespace pgslow
