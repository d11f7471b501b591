#include "text_scan.h"

namespace kd::scan {
namespace {

bool digit(char c) { return c >= '0' && c <= '9'; }

// Matches the pattern at `at`; fills `fields`.
bool match_at(const std::string& s, size_t at, const std::vector<Piece>& pattern, std::vector<std::string>& fields) {
  fields.clear();
  for (const Piece& p : pattern) {
    if (p.kind == Piece::Text) {
      if (s.compare(at, p.text.size(), p.text) != 0) return false;
      at += p.text.size();
    } else if (p.kind == Piece::Number) {
      size_t end = at;
      while (end < s.size() && digit(s[end])) ++end;
      if (end == at) return false;
      if (p.decimal && end + 1 < s.size() && s[end] == '.' && digit(s[end + 1])) {
        end += 1;
        while (end < s.size() && digit(s[end])) ++end;
      }
      fields.push_back(s.substr(at, end - at));
      at = end;
    } else {
      const std::string* found = nullptr;
      for (const std::string& w : p.words)
        if (s.compare(at, w.size(), w) == 0) {
          found = &w;
          break;
        }
      if (!found) return false;
      fields.push_back(*found);
      at += found->size();
    }
  }
  return true;
}

}  // namespace

std::optional<std::vector<std::string>> search(const std::string& s, const std::vector<Piece>& pattern) {
  std::vector<std::string> fields;
  for (size_t at = 0; at < s.size(); ++at)
    if (match_at(s, at, pattern, fields)) return fields;
  return std::nullopt;
}

}  // namespace kd::scan
