// Privacy: what goes into a report or onto the terminal from an error message is its
// first line, with paths, the user's name, home and host name replaced.
#pragma once
#include <string>
#include <string_view>

namespace kd {

struct Identity {  // what must never appear; read once from the machine
  std::string user, home, host;
  static Identity of_this_machine();
};

std::string redact(std::string_view text, const Identity& who);
std::string redact(std::string_view text);  // with Identity::of_this_machine()

}  // namespace kd
