// The value syntaxes of the command line and the run plan. Pure, locale-free, unit-tested: a value the
// tool writes (plain_decimal) always reads back as the same value (parse_decimal).
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kd {

// A whole number of at most 9 ASCII digits, at most max ("12"; not "+1", " 1", "0x1").
std::optional<long> parse_whole(const std::string& s, long max);

// A plain decimal number ("12", "12.5", "0.000001"): strtod alone would also take " 12", "+12", "1e1", "0x10".
std::optional<double> parse_decimal(const std::string& s);

// The form parse_decimal reads back as the same double (at most 9 decimals; never "1e-06").
std::string plain_decimal(double v);

std::vector<std::string> split_commas(const std::string& s);

// "HOST:PORT" or "[IPv6]:PORT"; nullopt when malformed.
std::optional<std::pair<std::string, int>> parse_host_port(const std::string& s);

}  // namespace kd
