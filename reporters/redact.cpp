#include "redact.h"

#include <pwd.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>

namespace kd {

Identity Identity::of_this_machine() {
  Identity id;
  if (const passwd* pw = ::getpwuid(::getuid())) {
    id.user = pw->pw_name ? pw->pw_name : "";
    id.home = pw->pw_dir ? pw->pw_dir : "";
  }
  if (const char* h = std::getenv("HOME")) id.home = h;
  if (const char* u = std::getenv("USER"); u && *u) id.user = u;
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0) id.host = host;
  return id;
}

namespace {

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; }
bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }  // "alice-job": alice is a name

// Replaces `what` only where it stands as a whole word, so that user "ray" leaves "array"
// alone and home "/root" leaves "/rootfs" alone. A name (user, host) also ends at a '-'.
void replace_word(std::string* s, const std::string& what, const std::string& with, size_t min_size = 3,
                  bool (*inside)(char) = word_char) {
  if (what.size() < min_size) return;  // too short to replace without mangling ordinary words
  for (size_t pos = s->find(what); pos != std::string::npos;) {
    const size_t end = pos + what.size();
    const bool whole = (pos == 0 || !inside((*s)[pos - 1]) || what[0] == '/') && (end == s->size() || !inside((*s)[end]));
    if (whole) {
      s->replace(pos, what.size(), with);
      pos = s->find(what, pos + with.size());
    } else {
      pos = s->find(what, pos + 1);
    }
  }
}

// Cuts at most max bytes without splitting a UTF-8 character (a split one makes the report invalid JSON).
std::string truncate_utf8(const std::string& s, size_t max) {
  if (s.size() <= max) return s;
  size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  // Nor inside a word: "alice-laptop" cut to "alice..." would show user alice as a whole word.
  // (A word longer than 64 bytes is cut where it is: what stays is still one long word.)
  size_t start = cut;
  while (start > 0 && cut - start < 64 && word_char(s[start - 1]) && word_char(s[start])) --start;
  if (start == 0 || !word_char(s[start - 1]) || !word_char(s[start])) cut = start;
  // Nor after a slash: a kept "http:/" or a lone " /" followed by "..." would read as the start of a path.
  while (cut >= 1 && s[cut - 1] == '/') --cut;
  return s.substr(0, cut) + "...";
}

bool ends_path(char c);

bool starts_path_at(const std::string& s, size_t i) {
  // A slash alone is a word, not a path: "unsupported display driver / cuda driver combination" (CUDA error 803).
  if (s[i] == '/' && (i + 1 == s.size() || ends_path(s[i + 1]))) return false;
  // "/x", "~/x", and the relative "./x" and "../x" (which may climb into a home folder)
  const bool slash = s[i] == '/' || (s[i] == '~' && i + 1 < s.size() && s[i + 1] == '/') ||
                     s.compare(i, 2, "./") == 0 || s.compare(i, 3, "../") == 0;
  if (!slash || i == 0) return slash;
  // After ':' a path list goes on ("/a/lib:/b/lib", as in LD_LIBRARY_PATH); "http://" is no path.
  if (s[i - 1] == ':') return s.compare(i, 2, "//") != 0;
  return std::string_view(" \t'\"`=([{<,").find(s[i - 1]) != std::string_view::npos;
}

bool ends_path(char c) { return std::string_view(" \t'\"`,;:)]}>").find(c) != std::string_view::npos; }

// "/opt/x/libc10.so: cannot ..." -> "<path>/libc10.so: cannot ...". Only tokens that start
// like a path are touched, so "N/A" and "I/O" stay as written.
std::string replace_paths(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    if (!starts_path_at(s, i)) {
      out += s[i++];
      continue;
    }
    size_t end = i;
    while (end < s.size() && !ends_path(s[end])) ++end;
    // A folder name with spaces: "/home/a/my models/x.pt" goes on while the next word holds a '/'.
    while (end < s.size() && s[end] == ' ') {
      size_t next = end + 1;
      while (next < s.size() && !ends_path(s[next])) ++next;
      if (s.substr(end + 1, next - end - 1).find('/') == std::string::npos) break;
      end = next;
    }
    const std::string token = s.substr(i, end - i);
    const std::string base = token.substr(token.rfind('/') + 1);
    out += base.empty() ? "<path>" : "<path>/" + base;
    i = end;
  }
  return out;
}

}  // namespace

std::string redact(std::string_view text, const Identity& who) {
  std::string s(text.substr(0, text.find('\n')));
  if (who.home.size() > 1) replace_word(&s, who.home, "~");
  s = replace_paths(s);  // absolute and home-relative paths: keep the file's own name only
  if (who.user != "root") replace_word(&s, who.user, "<user>", 3, name_char);  // "root" names no one
  replace_word(&s, who.host, "<host>", 2, name_char);  // short host names ("n1") too, as whole words
  return truncate_utf8(s, 400);
}

std::string redact(std::string_view text) {
  static const Identity who = Identity::of_this_machine();
  return redact(text, who);
}

}  // namespace kd
