#include "apply/bytes.h"

#include <gtest/gtest.h>

#include "common/errors.h"

namespace pgslow::apply {
namespace {

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Base64, KnownVectors) {
  EXPECT_EQ(base64_encode(""), "");
  EXPECT_EQ(base64_encode("f"), "Zg==");
  EXPECT_EQ(base64_encode("fo"), "Zm8=");
  EXPECT_EQ(base64_encode("foo"), "Zm9v");
  EXPECT_EQ(base64_encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(base64_decode("Zm9vYg=="), "foob");
  EXPECT_EQ(base64_decode("Zm9vYmE="), "fooba");
}

TEST(Base64, RoundTripsEveryByte) {
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  for (std::size_t len = 0; len <= all.size(); len += 37) {
    std::string part = all.substr(0, len);
    EXPECT_EQ(base64_decode(base64_encode(part)), part) << "length " << len;
  }
  EXPECT_EQ(base64_decode(base64_encode(all)), all);
}

TEST(Base64, RejectsDamage) {
  EXPECT_THROW(base64_decode("Zm9"), RuntimeError);
  EXPECT_THROW(base64_decode("Zm9*"), RuntimeError);
  EXPECT_THROW(base64_decode("Z=9v"), RuntimeError);
}

}  // namespace
}  // namespace pgslow::apply
