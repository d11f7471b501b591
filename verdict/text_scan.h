// Quantities in error texts ("Tried to allocate 64.00 MiB", "total capacity of 139.80 GiB of which 139.28 GiB is
// free"), found without <regex>: its instantiation alone was about a tenth of the first verdict's largest compile step
// on 2 cores (docs/BENCHMARKS.md).
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace kd::scan {

// One piece of a pattern: literal text, a number (digits, with a decimal part if `decimal`), or one of `words`.
struct Piece {
  enum Kind { Text, Number, Word } kind;
  std::string text;                // Text: what must follow
  bool decimal = true;             // Number: [0-9]+(\.[0-9]+)? or [0-9]+
  std::vector<std::string> words;  // Word: the first that matches
};
inline Piece text(std::string t) { return {Piece::Text, std::move(t), true, {}}; }
inline Piece number(bool decimal = true) { return {Piece::Number, "", decimal, {}}; }
inline Piece word(std::vector<std::string> w) { return {Piece::Word, "", true, std::move(w)}; }

// The first place in s where the pattern matches: what each Number and Word matched, in order; or nothing.
std::optional<std::vector<std::string>> search(const std::string& s, const std::vector<Piece>& pattern);

}  // namespace kd::scan
