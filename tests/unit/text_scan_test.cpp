// The quantities of error texts, found as <regex> found them before (verdict/text_scan.h).
#include <gtest/gtest.h>

#include "verdict/text_scan.h"

namespace kd::scan {
namespace {

using Fields = std::vector<std::string>;

TEST(TextScan, FirstPlaceWhereTheWholePatternMatches) {
  const std::vector<Piece> p = {text("allocate "), number(), text(" "), word({"KiB", "MiB"})};
  // The first "allocate " is followed by no number, the second by a unit not listed: the third matches.
  EXPECT_EQ(search("allocate x; allocate 3 GiB; allocate 1.50 MiB.", p), (Fields{"1.50", "MiB"}));
  EXPECT_FALSE(search("allocate 3 GiB", p).has_value());
  EXPECT_FALSE(search("", p).has_value());
}

TEST(TextScan, NumbersAreDigitsWithAnOptionalDecimalPart) {
  EXPECT_EQ(search("of 139.80 GiB", {text("of "), number()}), (Fields{"139.80"}));
  EXPECT_EQ(search("of 7. GiB", {text("of "), number()}), (Fields{"7"}));  // a dot without digits ends it
  EXPECT_EQ(search("of 139.80 GiB", {text("of "), number(false)}), (Fields{"139"}));
  // Digits only, then " bytes": "1.5 bytes" does not match, as [0-9]+ bytes did not.
  EXPECT_FALSE(search("tried to allocate 1.5 bytes", {text("tried to allocate "), number(false), text(" bytes")}));
  EXPECT_EQ(search("tried to allocate 1125899906842624 bytes", {text("tried to allocate "), number(false), text(" bytes")}),
            (Fields{"1125899906842624"}));
}

}  // namespace
}  // namespace kd::scan
