#include "kernel_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <future>
#include <map>
#include <string_view>
#include <tuple>

#include <fmt/format.h>

#include "contract/report_parts.h"
#include "process/run_process.h"
#include "read_text.h"
#include "verdict/gpu_health.h"
#include "verdict/xid_catalogue.h"

namespace kd::machine {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

double seconds_since_boot() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);  // the kernel log's clock (printk's and the journal's monotonic time)
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// "0000:3b:00" (the driver's Xid), "0000:05:00.0" (an SXid) -> NVML's form "00000000:3B:00.0"; nothing if malformed.
std::optional<std::string> nvml_pci(std::string_view text) {
  if (text.size() > 32) return std::nullopt;
  const std::string t(text);
  PciAddress a;
  unsigned function = 0;
  int used = 0, more = 0;
  if (std::sscanf(t.c_str(), "%x:%x:%x%n", &a.domain, &a.bus, &a.device, &used) != 3) return std::nullopt;
  if (used != static_cast<int>(t.size()) &&
      (std::sscanf(t.c_str() + used, ".%x%n", &function, &more) != 1 || used + more != static_cast<int>(t.size())))
    return std::nullopt;
  return format_pci_bus_id(a);
}

// The digits at the start of s, as a number; nothing if none.
std::optional<int> leading_number(std::string_view s, size_t* used) {
  size_t i = 0;
  while (i < s.size() && i < 6 && s[i] >= '0' && s[i] <= '9') ++i;
  if (i == 0) return std::nullopt;
  *used = i;
  return std::atoi(std::string(s.substr(0, i)).c_str());
}

struct Seen {
  int64_t count = 0;
  double first = 0, last = 0;
  std::optional<xid::Recovery> recovery;  // Xid 154: the newest line's
  bool fatal = false;                     // an SXid: any of its lines said Fatal
};

// What the log's lines say, kept as counts: never the lines themselves.
class Collector {
 public:
  void record(double t, std::string_view message) {
    if (records_ == 0) oldest_ = t;
    ++records_;
    if (const size_t nvrm = message.find("NVRM: "); nvrm != std::string_view::npos) {  // most records are neither
      const std::string_view rest = message.substr(nvrm + 6);
      if (rest.rfind("loading NVIDIA UNIX", 0) == 0) driver_loaded_ = driver_loaded_ ? std::max(*driver_loaded_, t) : t;
      else if (rest.rfind("Xid (", 0) == 0) xid_line(t, rest.substr(5));
    } else if (const size_t sx = message.find(": SXid (PCI:"); sx != std::string_view::npos) {
      sxid_line(t, message.substr(sx + 12));
    }
  }
  bool overflowed() const { return overflowed_; }
  json facts(double now_s, const std::string& source) const;

 private:
  // "PCI:0000:3b:00): 79, pid=..., GPU has fallen off the bus." (older drivers: "0000:03:00): 14, ...")
  void xid_line(double t, std::string_view rest) {
    if (rest.rfind("PCI:", 0) == 0) rest.remove_prefix(4);
    const size_t close = rest.find("): ");
    if (close == std::string_view::npos) return;
    const auto pci = nvml_pci(rest.substr(0, close));
    size_t used = 0;
    const auto code = leading_number(rest.substr(close + 3), &used);
    if (!pci || !code) return;
    Seen* s = seen("xid", *pci, *code, t);
    if (s && *code == 154)
      if (const auto r = xid::recovery_from_line(rest.substr(close + 3 + used))) s->recovery = r;
  }
  // "0000:05:00.0): 12028, Non-fatal, Link 32 ..."; a line of the same event's details ("12028, Severity 0 Engine
  // instance ...") is not another event.
  void sxid_line(double t, std::string_view rest) {
    const size_t close = rest.find("): ");
    if (close == std::string_view::npos) return;
    const auto pci = nvml_pci(rest.substr(0, close));
    size_t used = 0;
    const std::string_view after = rest.substr(close + 3);
    const auto code = leading_number(after, &used);
    if (!pci || !code) return;
    const std::string_view severity = after.substr(used);
    const bool fatal = severity.rfind(", Fatal", 0) == 0;
    if (!fatal && severity.rfind(", Non-fatal", 0) != 0) return;
    if (Seen* s = seen("sxid", *pci, *code, t)) s->fatal = s->fatal || fatal;
  }
  Seen* seen(const char* kind, const std::string& pci, int code, double t) {
    const auto key = std::make_tuple(std::string(kind), pci, code);
    auto it = events_.find(key);
    if (it == events_.end()) {
      if (events_.size() >= kKernelLogMaxKinds) {
        overflowed_ = true;
        return nullptr;
      }
      it = events_.emplace(key, Seen{0, t, t, std::nullopt, false}).first;
    }
    ++it->second.count;
    it->second.last = t;
    return &it->second;
  }

  int64_t records_ = 0;
  double oldest_ = 0;
  std::optional<double> driver_loaded_;
  std::map<std::tuple<std::string, std::string, int>, Seen> events_;
  bool overflowed_ = false;
};

double rounded(double s) { return std::round(std::max(s, 0.0) * 10) / 10; }

json event_fact(const std::string& kind, const std::string& pci, int code, const Seen& s, double now_s,
                const std::optional<double>& driver_loaded) {
  xid::XidInfo info = kind == "xid" ? xid::find_xid(code) : xid::XidInfo{code, "NVSwitch error", false, std::nullopt};
  if (kind == "sxid") info.meaning = s.fatal ? "NVSwitch error (fatal)" : "NVSwitch error (non-fatal)";
  if (code == 154 && kind == "xid" && s.recovery) info = xid::recovery_info(*s.recovery);
  json e;
  report::put(&e, report::xid_kind, kind);
  report::put(&e, report::xid_pci_bus_id, pci);
  report::put(&e, report::xid_code, code);
  report::put(&e, report::xid_meaning, std::string(info.meaning));
  report::put(&e, report::xid_unusable, info.unusable);
  report::put(&e, report::xid_action,
              info.action ? std::optional<std::string>(std::string(action_word(*info.action))) : std::nullopt);
  report::put(&e, report::xid_count, s.count);
  report::put(&e, report::xid_first_s_ago, rounded(now_s - s.first));
  report::put(&e, report::xid_last_s_ago, rounded(now_s - s.last));
  // No load line in the log: the driver was loaded before its oldest record, so every event is newer.
  report::put(&e, report::xid_after_driver_load, !driver_loaded || s.last > *driver_loaded);
  report::put(&e, report::xid_recovery_action,
              s.recovery ? std::optional<std::string>(std::string(xid::recovery_name(*s.recovery))) : std::nullopt);
  report::put(&e, report::xid_severity,
              kind == "sxid" ? std::optional<std::string>(s.fatal ? "fatal" : "non-fatal") : std::nullopt);
  return e;
}

json Collector::facts(double now_s, const std::string& source) const {
  json out;
  if (records_ == 0) {  // a log without a single record was not read: no kernel boots silently
    report::put(&out, report::kernel_log_readable, false);
    report::put(&out, report::kernel_log_source, std::nullopt);
    report::put(&out, report::kernel_log_why_not, source + " holds no kernel record");
  } else {
    report::put(&out, report::kernel_log_readable, true);
    report::put(&out, report::kernel_log_source, source);
    report::put(&out, report::kernel_log_why_not, std::nullopt);
  }
  report::put(&out, report::kernel_log_records, records_);
  report::put(&out, report::kernel_log_truncated, overflowed_);
  report::put(&out, report::kernel_log_from_boot, records_ > 0 && oldest_ <= 5.0);  // boot's records begin at 0 s
  report::put(&out, report::kernel_log_oldest_s_ago, records_ ? std::optional(rounded(now_s - oldest_)) : std::nullopt);
  report::put(&out, report::kernel_log_driver_loaded_s_ago,
              driver_loaded_ ? std::optional(rounded(now_s - *driver_loaded_)) : std::nullopt);
  report::put(&out, report::kernel_log_duration_ms, 0.0);
  json events = json::array();
  for (const auto& [key, s] : events_)
    events.push_back(event_fact(std::get<0>(key), std::get<1>(key), std::get<2>(key), s, now_s, driver_loaded_));
  report::put(&out, report::kernel_log_events, records_ ? events : json());
  return out;
}

json not_readable(const std::string& why) {
  json out = Collector().facts(0, "");
  report::put(&out, report::kernel_log_why_not, why);
  return out;
}

// One line of text: a /dev/kmsg record ("6,1234,5678901,-;message"), or "[ 5678.901234] message" (dmesg,
// journalctl -o short-monotonic); a line with no time is no record.
void feed_line(std::string_view line, Collector* c) {
  if (!line.empty() && line[0] == '[') {
    const size_t close = line.find(']');
    if (close == std::string_view::npos) return;
    char* end = nullptr;
    const std::string number(line.substr(1, close - 1));
    const double t = std::strtod(number.c_str(), &end);
    if (end == number.c_str()) return;
    c->record(t, line.substr(close + 1));
    return;
  }
  const size_t semi = line.find(';');
  if (semi == std::string_view::npos || semi > 64) return;
  // "6,1234,5678901,-": priority, sequence, microseconds since boot, flags.
  const char* p = line.data();
  const char* const end = p + semi;
  unsigned long long field[3] = {0, 0, 0};
  for (int k = 0; k < 3; ++k) {
    const auto [next, ec] = std::from_chars(p, end, field[k]);
    if (ec != std::errc() || next == end || *next != ',') return;
    p = next + 1;
  }
  c->record(static_cast<double>(field[2]) / 1e6, line.substr(semi + 1));
}

void feed_text(std::string_view text, Collector* c) {
  for (size_t start = 0; start < text.size();) {
    const size_t nl = text.find('\n', start);
    const size_t end = nl == std::string_view::npos ? text.size() : nl;
    if (end > start && text[start] != ' ') feed_line(text.substr(start, end - start), c);  // ' ': a kmsg record's dict
    start = end + 1;
  }
}

std::string errno_text(int e) { return std::strerror(e); }

// /dev/kmsg: one record per read(), from the oldest kept; EAGAIN is its end (O_NONBLOCK), EPIPE a record overwritten
// while reading (the next is read). Nothing when it cannot be opened: why.
std::optional<json> read_kmsg(std::string* why) {
  const int fd = ::open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    *why = "/dev/kmsg: " + errno_text(e);
    if ((e == EPERM || e == EACCES) && read_line("/proc/sys/kernel/dmesg_restrict") == std::string("1"))
      *why += " (kernel.dmesg_restrict is 1: reading the kernel log needs CAP_SYSLOG)";
    return std::nullopt;
  }
  Collector c;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(kKernelLogLimitS));
  char buf[16384];
  size_t bytes = 0;
  bool stopped = false;
  for (int64_t n = 0;; ++n) {
    const ssize_t got = ::read(fd, buf, sizeof buf);
    if (got < 0) {
      if (errno == EINTR || errno == EPIPE) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) *why = "/dev/kmsg: " + errno_text(errno);
      break;
    }
    if (got == 0) break;
    feed_text(std::string_view(buf, static_cast<size_t>(got)), &c);
    bytes += static_cast<size_t>(got);
    if (bytes > kKernelLogMaxBytes || (n % 256 == 0 && Clock::now() > deadline)) {
      stopped = true;
      break;
    }
  }
  ::close(fd);
  json out = c.facts(seconds_since_boot(), "kmsg");
  if (stopped || c.overflowed()) report::put(&out, report::kernel_log_truncated, true);
  return out;
}

// journalctl -k for this boot (the newest 200000 lines), where /dev/kmsg is not readable; a user who may not read
// the system journal gets no kernel record, which is "not readable", never an empty log.
json read_journal(const std::string& kmsg_why, bool own_group) {
  const std::string journalctl = find_executable("journalctl");
  if (journalctl.empty()) return not_readable(kmsg_why + "; journalctl: not installed");
  const ProcessResult r = run_process({journalctl, "-k", "-b", "-o", "short-monotonic", "--no-pager", "-q",
                                       "--lines=200000"},
                                      kJournalLimitS, false, own_group);
  if (r.timed_out) return not_readable(kmsg_why + fmt::format("; journalctl -k did not answer within {:g} s", kJournalLimitS));
  if (!r.started || r.exit_status != 0)
    return not_readable(kmsg_why + fmt::format("; journalctl -k failed (exit {})", r.started ? r.exit_status : 127));
  Collector c;
  feed_text(std::string_view(r.output).substr(0, kKernelLogMaxBytes), &c);
  json out = c.facts(seconds_since_boot(), "journal");
  if (!report::read(out, report::kernel_log_readable).value_or(false))
    return not_readable(kmsg_why + "; journalctl -k shows no kernel record of this boot (this user may not read the "
                                   "system journal: the groups systemd-journal or adm can)");
  if (r.output.size() > kKernelLogMaxBytes || c.overflowed()) report::put(&out, report::kernel_log_truncated, true);
  return out;
}

std::shared_future<json>& started() {
  static std::shared_future<json> f;
  return f;
}

}  // namespace

json kernel_log_from_text(const std::string& text, double now_s, const std::string& source) {
  Collector c;
  feed_text(text, &c);
  return c.facts(now_s, source);
}

json read_kernel_log(const std::optional<std::string>& test_file, bool own_group) {
  const auto start = Clock::now();
  json out;
  if (test_file) {  // TEST ONLY: a recorded log read as this boot's
    const std::optional<std::string> text = read_text(*test_file, kKernelLogMaxBytes);
    out = text ? kernel_log_from_text(*text, seconds_since_boot(), "file")
               : not_readable("the file given by --kernel-log-file: " + errno_text(errno));
  } else {
    std::string why;
    const std::optional<json> kmsg = read_kmsg(&why);
    out = kmsg && report::read(*kmsg, report::kernel_log_readable).value_or(false) ? *kmsg
          : kmsg                                                                  ? read_journal("/dev/kmsg holds no record", own_group)
                                                                                  : read_journal(why, own_group);
  }
  report::put(&out, report::kernel_log_duration_ms,
              std::round(std::chrono::duration<double, std::milli>(Clock::now() - start).count() * 1000) / 1000);
  return out;
}

void start_kernel_log_read(const std::optional<std::string>& test_file) {
  if (!started().valid())
    started() = std::async(std::launch::async, [test_file] { return read_kernel_log(test_file, false); }).share();
}

std::optional<json> kernel_log_result() {
  if (!started().valid()) return std::nullopt;
  return started().get();
}

}  // namespace kd::machine
