#include "printable.h"

#include <fmt/format.h>

namespace kd {

std::string printable(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) {  // C0 controls (ESC, BEL, CR, LF, TAB...) and DEL
      out += fmt::format("\\x{:02x}", c);
    } else if (c == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(s[i + 1]) <= 0x9f) {  // C1 controls (U+0080-U+009F, e.g. CSI)
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(s[i + 1]));
      ++i;
    } else if (c == 0xe2 && i + 2 < s.size()) {  // U+2028/9 line breaks, U+202A-E and U+2066-9 direction overrides
      const auto b = static_cast<unsigned char>(s[i + 1]), d = static_cast<unsigned char>(s[i + 2]);
      const bool hidden = (b == 0x80 && d >= 0xa8 && d <= 0xae) || (b == 0x81 && d >= 0xa6 && d <= 0xa9);
      if (hidden) {
        out += fmt::format("\\u{:04x}", 0x2000 + ((b & 0x3f) << 6) + (d & 0x3f));
        i += 2;
      } else {
        out += static_cast<char>(c);
      }
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

nlohmann::json printable_strings(const nlohmann::json& j) {
  if (j.is_string()) return printable(j.get_ref<const std::string&>());
  if (j.is_array()) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& v : j) a.push_back(printable_strings(v));
    return a;
  }
  if (j.is_object()) {
    nlohmann::json o = nlohmann::json::object();
    for (const auto& [k, v] : j.items()) o[printable(k)] = printable_strings(v);
    return o;
  }
  return j;
}

}  // namespace kd
