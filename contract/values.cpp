#include "values.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

namespace kd {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }  // ASCII only, whatever the locale
bool all_digits(const std::string& s) { return std::all_of(s.begin(), s.end(), is_digit); }

}  // namespace

std::optional<long> parse_whole(const std::string& s, long max) {
  if (s.empty() || s.size() > 9 || !all_digits(s)) return std::nullopt;
  const long n = std::strtol(s.c_str(), nullptr, 10);
  if (n > max) return std::nullopt;
  return n;
}

std::optional<double> parse_decimal(const std::string& s) {
  const size_t dot = s.find('.');
  const std::string whole = s.substr(0, dot), frac = dot == std::string::npos ? "1" : s.substr(dot + 1);
  if (whole.empty() || whole.size() > 9 || frac.empty() || frac.size() > 9) return std::nullopt;
  if (!all_digits(whole) || !all_digits(frac)) return std::nullopt;
  const double v = std::strtod(s.c_str(), nullptr);
  if (!std::isfinite(v)) return std::nullopt;
  return v;
}

std::string plain_decimal(double v) {
  std::string s = fmt::format("{:.9f}", v);
  s.erase(s.find_last_not_of('0') + 1);
  if (s.back() == '.') s.pop_back();
  return s;
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    const size_t comma = s.find(',', start);
    parts.push_back(s.substr(start, comma - start));
    if (comma == std::string::npos) return parts;
    start = comma + 1;
  }
}

std::optional<std::pair<std::string, int>> parse_host_port(const std::string& s) {
  const size_t colon = s.rfind(':');
  if (colon == std::string::npos || colon == 0) return std::nullopt;
  std::string host = s.substr(0, colon);
  if (host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') return std::nullopt;
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string::npos) {
    return std::nullopt;  // an IPv6 address goes in brackets
  }
  if (host.find_first_of(" \t/") != std::string::npos) return std::nullopt;
  const auto port = parse_whole(s.substr(colon + 1), 65535);
  if (!port || *port < 1) return std::nullopt;
  return std::make_pair(host, static_cast<int>(*port));
}

}  // namespace kd
