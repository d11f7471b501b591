// Fuzzes what the supervisor does with text it does not control: an error message through
// redact(), worker event lines through build_report(), the result through dump() and
// write_new_file() into a temporary folder, and onto the terminal. The input's first line is the message, the rest
// the event lines; its first byte also picks how the worker ended.
// Beyond "no crash, no sanitizer report": the redacted message is one bounded line, valid
// UTF-8 stays valid, no path, home, user or host name survives it; the report round-trips
// through JSON, its exit code matches its code, and the file holds exactly the report.
#include <fcntl.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "reporters/redact.h"
#include "reporters/report_builder.h"
#include "reporters/report_file.h"
#include "reporters/terminal_reporter.h"
#include "contract/events.h"

namespace {

// A broken property: say which, then abort so that libFuzzer keeps the input.
#define check(ok) ((ok) ? (void)0 : (std::fprintf(stderr, "property failed: %s (line %d)\n", #ok, __LINE__), std::abort()))

const kd::Identity kWho{"kdfuzzuser", "/home/kdfuzzuser", "kdfuzzhost"};

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; }

bool valid_utf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    i += n;
  }
  return true;
}

bool has_whole_word(const std::string& s, const std::string& w) {
  for (size_t p = s.find(w); p != std::string::npos; p = s.find(w, p + 1))
    if ((p == 0 || !word_char(s[p - 1])) && (p + w.size() == s.size() || !word_char(s[p + w.size()]))) return true;
  return false;
}

// A '/' (or "~/") where a path would start: at the beginning, or after a space, quote, '=',
// an opening bracket, a comma or a ':' that does not begin "://".
bool has_path(const std::string& s) {
  for (size_t i = 0; i < s.size(); ++i) {
    const bool slash = s[i] == '/' || (s[i] == '~' && i + 1 < s.size() && s[i + 1] == '/');
    if (!slash) continue;
    // A slash alone is a word ("display driver / cuda driver", CUDA error 803): followed by a blank or the end.
    if (s[i] == '/' && (i + 1 == s.size() || std::string_view(" \t'\"`,;:)]}>").find(s[i + 1]) != std::string_view::npos))
      continue;
    if (i == 0 || std::string_view(" \t'\"`=([{<,").find(s[i - 1]) != std::string_view::npos) return true;
    if (s[i - 1] == ':' && s.compare(i, 2, "//") != 0) return true;
  }
  return false;
}

// The report's messages are redacted with this machine's identity: their user, home and
// host are not planted, so only the form is checked there.
void check_redacted_form(const std::string& out) {
  check(out.find('\n') == std::string::npos);
  check(out.size() <= 403);  // 400 and "..."
  check(!has_path(out));
}

void check_redacted(const std::string& out) {
  check_redacted_form(out);
  for (size_t p = out.find(kWho.home); p != std::string::npos; p = out.find(kWho.home, p + 1))
    check(p + kWho.home.size() < out.size() && word_char(out[p + kWho.home.size()]));  // a longer name only
  check(!has_whole_word(out, kWho.user) && !has_whole_word(out, kWho.host));
}

std::string g_folder;  // on tmpfs where there is one: the writer's fsync() costs nothing there

void remove_folder() {
  unlink((g_folder + "/report.json").c_str());
  rmdir(g_folder.c_str());
}

const std::string& temp_folder() {
  if (g_folder.empty()) {
    std::string pattern = (access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp") + std::string("/kd-fuzz-XXXXXX");
    check(mkdtemp(pattern.data()) != nullptr);
    g_folder = pattern;
    std::atexit(remove_folder);
  }
  return g_folder;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const std::string message = input.substr(0, input.find('\n'));

  const std::string out = kd::redact(input, kWho);
  check_redacted(out);
  if (valid_utf8(message)) check(valid_utf8(out));

  kd::RunRecord run;
  run.run_id = "fuzz";
  if (size > 0) {
    const uint8_t how = data[0] % 4;
    run.worker.exited = how == 0;
    run.worker.timed_out = how == 1;
    run.worker.signal = how == 2 ? SIGKILL : 0;
    run.worker.interrupted = how == 3;
  }
  kd::events::LineCollector lines;
  lines.feed(input.substr(message.size()));
  lines.finish();
  run.events = lines.events();
  run.malformed_events = lines.malformed();
  const nlohmann::json report =
      kd::build_report(run, {{"L1", "L1_RuntimeImport", "runtime & import"}, {"L3", "L3_TinyOp", "tiny op"}});
  const auto code = kd::code_from_name(report.value("code", ""));
  check(code.has_value() && report.value("exit_code", -1) == kd::exit_code(*code));
  if (report["error"].is_object()) check_redacted_form(report["error"].value("message", ""));
  check(!kd::render_terminal(report, size > 0 && (data[0] & 1)).empty());

  const std::string text = report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  check(nlohmann::json::parse(text, nullptr, false).is_object());
  const std::string& folder = temp_folder();
  const std::string path = folder + "/report.json";
  check(!kd::write_new_file(path, text).has_value());
  std::ifstream in(path, std::ios::binary);
  std::ostringstream back;
  back << in.rdbuf();
  check(back.str() == text);
  check(unlink(path.c_str()) == 0);
  check(kd::write_new_file(folder, text).has_value());  // an existing path is refused
  return 0;
}
