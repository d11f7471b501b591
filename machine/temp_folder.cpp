#include "temp_folder.h"

#include <stdlib.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>

namespace kd::machine {

std::optional<MadeFolder> make_temp_folder(const std::string& name) {
  struct Candidate {
    std::string source, base;
  };
  std::vector<Candidate> candidates;
  for (const char* var : {"TMPDIR", "TEMP", "TMP"})
    if (const char* v = std::getenv(var); v && *v) candidates.push_back({var, v});
  // The report names them without their leading slash: it holds no path (docs/report.md's privacy).
  for (const char* dir : {"/tmp", "/var/tmp", "/usr/tmp"}) candidates.push_back({dir + 1, dir});
  char cwd[PATH_MAX];
  if (::getcwd(cwd, sizeof cwd)) candidates.push_back({"current folder", cwd});
  MadeFolder made;
  for (const Candidate& c : candidates) {
    std::string t = c.base + (c.base.back() == '/' ? "" : "/") + name;
    if (::mkdtemp(t.data())) {
      made.path = t;
      made.base = c.base;
      made.source = c.source;
      return made;
    }
    if (c.source == "TMPDIR" || c.source == "TEMP" || c.source == "TMP") made.skipped.push_back(c.source);
  }
  return std::nullopt;
}

}  // namespace kd::machine
