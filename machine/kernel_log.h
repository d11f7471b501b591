// The kernel's evidence of GPU faults (docs/health.md "The kernel's evidence"): the NVIDIA driver's Xid lines (and the
// NVSwitch's SXid lines) of this boot, read from /dev/kmsg (non-blocking, bounded in size and time) or, where that is
// not readable, from `journalctl -k` (a child of at most 2 s), decoded by verdict/xid_catalogue.h into the report's
// host.kernel_log: per GPU (its PCI address as NVML writes it) and code, how many lines, how long ago, and whether
// the newest came after the driver's last load. Never a line of the log itself. A log that cannot be read says so
// and why, with no events (null), never an empty list that would look like health.
#pragma once
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kd::machine {

inline constexpr double kKernelLogLimitS = 1.0;              // reading /dev/kmsg or a file: at most this long
inline constexpr double kJournalLimitS = 2.0;                // journalctl's child: at most this long
inline constexpr size_t kKernelLogMaxBytes = size_t{64} << 20;  // and at most this much text
inline constexpr size_t kKernelLogMaxKinds = 256;            // distinct (GPU, code) events listed

// Reads this boot's kernel log into host.kernel_log: test_file (--kernel-log-file, TEST ONLY) instead of the
// machine's when given. own_group: journalctl in a process group of its own (the supervisor's), else the worker's.
nlohmann::json read_kernel_log(const std::optional<std::string>& test_file, bool own_group);

// host.kernel_log from a log's text: /dev/kmsg's records ("6,1234,5678901,-;NVRM: ...") or dmesg's and
// journalctl -o short-monotonic's lines ("[ 5678.901234] ..."), read at now_s seconds since boot. Pure: unit-tested.
nlohmann::json kernel_log_from_text(const std::string& text, double now_s, const std::string& source);

// The worker starts the read when it starts (a GPU run), so that it overlaps LibTorch's load; L2's health test and
// the worker's end take the result (waiting at most the read's own bounds).
void start_kernel_log_read(const std::optional<std::string>& test_file);
std::optional<nlohmann::json> kernel_log_result();  // nothing when it was not started

}  // namespace kd::machine
