// Text from another machine's report shown on this terminal or in Markdown: control characters
// (escape sequences, OSC, BEL, a newline that starts a forged line) and Unicode's direction
// overrides are shown as visible escapes such as "\x1b" instead of acting.
#pragma once
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kd {

std::string printable(std::string_view text);
nlohmann::json printable_strings(const nlohmann::json& j);  // every string in it, keys included

}  // namespace kd
