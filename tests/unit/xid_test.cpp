// The kernel's evidence (docs/health.md "The kernel's evidence: Xid"): a recorded kernel log (tests/data, as
// /dev/kmsg gives it: two GPUs, an NVSwitch, a driver reload) decoded into host.kernel_log, the same lines as dmesg and
// journalctl print them, a log that cannot be read, and the judgement of one GPU's events.
#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "contract/report_parts.h"
#include "machine/kernel_log.h"
#include "reporters/signature_facts.h"
#include "verdict/xid_catalogue.h"

namespace kd {
namespace {

using nlohmann::json;

std::string recorded() {
  std::ifstream in(KD_TEST_DATA "/kernel_log_xid.kmsg");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The event of host.kernel_log for (kind, PCI address, code), or null.
json event(const json& log, const std::string& kind, const std::string& pci, int code) {
  for (const json& e : report::read(log, report::kernel_log_events))
    if (report::read(e, report::xid_kind) == kind && report::read(e, report::xid_pci_bus_id) == pci &&
        report::read(e, report::xid_code) == code)
      return e;
  return json();
}

constexpr double kNow = 1000;  // seconds since boot when the log is read
const char* const kGpuA = "00000000:1B:00.0";
const char* const kGpuB = "00000000:3B:00.0";

TEST(KernelLog, ARecordedLogDecodedWithoutItsLines) {
  const json log = machine::kernel_log_from_text(recorded(), kNow, "file");
  EXPECT_EQ(report::read(log, report::kernel_log_readable), true);
  EXPECT_EQ(report::read(log, report::kernel_log_source), "file");
  EXPECT_EQ(report::read(log, report::kernel_log_records), 28);  // the dict lines (" SUBSYSTEM=pci") are no records
  EXPECT_EQ(report::read(log, report::kernel_log_from_boot), true);
  EXPECT_EQ(report::read(log, report::kernel_log_truncated), false);
  EXPECT_DOUBLE_EQ(*report::read(log, report::kernel_log_driver_loaded_s_ago), 796.1);  // the second (newest) load
  EXPECT_EQ(report::read(log, report::kernel_log_events).size(), 8u);

  const json dbe = event(log, "xid", kGpuA, 48);  // before the driver's reload: not since
  EXPECT_EQ(report::read(dbe, report::xid_unusable), true);
  EXPECT_EQ(report::read(dbe, report::xid_after_driver_load), false);
  EXPECT_EQ(report::read(dbe, report::xid_action), "reset_gpu");
  const json sm = event(log, "xid", kGpuA, 13);  // three lines of one application's fault
  EXPECT_EQ(report::read(sm, report::xid_count), 3);
  EXPECT_EQ(report::read(sm, report::xid_unusable), false);
  EXPECT_EQ(report::read(sm, report::xid_action), "rerun");
  EXPECT_DOUBLE_EQ(*report::read(sm, report::xid_last_s_ago), 488.6);
  const json bus = event(log, "xid", kGpuB, 79);
  EXPECT_EQ(report::read(bus, report::xid_meaning), "GPU has fallen off the bus");
  EXPECT_EQ(report::read(bus, report::xid_after_driver_load), true);
  EXPECT_EQ(report::read(bus, report::xid_action), "drain_node");
  const json recovery = event(log, "xid", kGpuB, 154);
  EXPECT_EQ(report::read(recovery, report::xid_recovery_action), "node_reboot");
  EXPECT_EQ(report::read(recovery, report::xid_unusable), true);
  // An SXid's detail lines are not events; its severity is its line's.
  const json link = event(log, "sxid", "00000000:05:00.0", 12028);
  EXPECT_EQ(report::read(link, report::xid_count), 1);
  EXPECT_EQ(report::read(link, report::xid_severity), "non-fatal");
  EXPECT_EQ(report::read(event(log, "sxid", "00000000:05:00.0", 20034), report::xid_severity), "fatal");
  // Never a line of the log: no process name, serial number or message text reaches the report.
  const std::string dumped = log.dump();
  for (const char* secret : {"python3", "1652223019876", "GPU-0c1a4be7", "Out Of Range", "48211"})
    EXPECT_EQ(dumped.find(secret), std::string::npos) << secret;
}

// dmesg's and journalctl -o short-monotonic's lines of the same events decode the same.
TEST(KernelLog, DmesgAndJournalLinesDecodeAsKmsgRecords) {
  const std::string text =
      "[    0.000000] Linux version 6.1.0-27-amd64\n"
      "[   12.901442] vm kernel: NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build\n"
      "[  701.882015] vm kernel: NVRM: Xid (PCI:0000:00:06): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n"
      "[  702.100000] NVRM: Xid (0000:00:06): 95, pid=9, name=x, Uncontained: FBHUB. RST: Yes, D-RST: No\n"
      "no time: NVRM: Xid (PCI:0000:00:06): 119, Timeout after 6s of waiting for RPC response from GPU0 GSP!\n";
  const json log = machine::kernel_log_from_text(text, kNow, "journal");
  EXPECT_EQ(report::read(log, report::kernel_log_records), 4);  // a line with no time is no record
  EXPECT_EQ(report::read(event(log, "xid", "00000000:00:06.0", 79), report::xid_after_driver_load), true);
  EXPECT_EQ(report::read(event(log, "xid", "00000000:00:06.0", 95), report::xid_unusable), true);
  EXPECT_TRUE(event(log, "xid", "00000000:00:06.0", 119).is_null());
}

// A log that cannot be read says so and why, with no events at all: never an empty list that looks like health.
TEST(KernelLog, ALogThatCannotBeReadIsNotAnEmptyOne) {
  const json empty = machine::kernel_log_from_text("", kNow, "journal");
  EXPECT_EQ(report::read(empty, report::kernel_log_readable), false);
  EXPECT_TRUE(report::read(empty, report::kernel_log_events).is_null());
  EXPECT_NE(report::read(empty, report::kernel_log_why_not)->find("holds no kernel record"), std::string::npos);
  const json missing = machine::read_kernel_log(std::string("/nonexistent/kernel.log"), true);
  EXPECT_EQ(report::read(missing, report::kernel_log_readable), false);
  EXPECT_TRUE(report::read(missing, report::kernel_log_events).is_null());
  EXPECT_EQ(report::read(missing, report::kernel_log_why_not),
            "the file given by --kernel-log-file: No such file or directory");
  // The machine's own log here: readable (/dev/kmsg or the journal), or not with why; never events without a read.
  const json mine = machine::read_kernel_log(std::nullopt, true);
  const bool readable = report::read(mine, report::kernel_log_readable).value_or(false);
  EXPECT_EQ(report::read(mine, report::kernel_log_events).is_array(), readable);
  EXPECT_EQ(report::read(mine, report::kernel_log_why_not).has_value(), !readable);
  EXPECT_LT(*report::read(mine, report::kernel_log_duration_ms), 3000);
}

// One GPU's events, matched by its PCI address: an unusable event since the driver's load fails it; older or lesser
// events, another GPU's and a fatal SXid only warn.
TEST(KernelLog, EachGpuIsJudgedOnItsOwnEvents) {
  const json log = machine::kernel_log_from_text(recorded(), kNow, "file");
  const xid::Judgement b = xid::judge_gpu(log, kGpuB);
  ASSERT_EQ(b.problems.size(), 2u);
  EXPECT_EQ(b.problems[0], "Xid 79 (GPU has fallen off the bus), 1 line, the last 5 min ago");
  EXPECT_EQ(b.problems[1], "Xid 154 (GPU recovery action: a node reboot is required), 1 line, the last 5 min ago");
  EXPECT_EQ(b.action, Action::DrainNode);
  const xid::Judgement a = xid::judge_gpu(log, kGpuA);
  EXPECT_TRUE(a.problems.empty());
  EXPECT_FALSE(a.action);
  std::string warnings;
  for (const auto& w : a.warnings) warnings += w + "\n";
  EXPECT_NE(warnings.find("Xid 48 (double-bit ECC error (uncorrectable memory error)), 1 line, the last 15 min ago, "
                          "before the driver's last load (not since)"),
            std::string::npos)
      << warnings;
  EXPECT_NE(warnings.find("Xid 13 (graphics engine exception"), std::string::npos) << warnings;
  EXPECT_NE(warnings.find("NVSwitch 00000000:05:00.0 SXid 20034 (fatal)"), std::string::npos) << warnings;
  EXPECT_EQ(warnings.find("12028"), std::string::npos) << warnings;  // non-fatal SXids: in the report, not warned of
  EXPECT_EQ(warnings.find("Xid 79"), std::string::npos) << warnings;  // another GPU's
  EXPECT_TRUE(xid::judge_gpu(machine::kernel_log_from_text("", kNow, "x"), kGpuB).problems.empty());
}

// Xid 154's recovery action decides: a reset or a reboot pending leaves the GPU unusable; back to none, it is not.
TEST(KernelLog, TheRecoveryActionIsTheNewestLines) {
  EXPECT_EQ(xid::recovery_from_line(", GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)"),
            xid::Recovery::GpuReset);
  EXPECT_EQ(xid::recovery_from_line(", GPU recovery action changed from 0x0 (None) to 0x2 (OS Reboot)"),
            xid::Recovery::NodeReboot);
  EXPECT_FALSE(xid::recovery_from_line(", GPU recovery action changed"));
  const std::string text =
      "[    1.0] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.127.05\n"
      "[  100.0] NVRM: Xid (PCI:0000:1b:00): 154, GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)\n"
      "[  200.0] NVRM: Xid (PCI:0000:1b:00): 154, GPU recovery action changed from 0x1 (GPU Reset Required) to 0x0 (None)\n";
  const json log = machine::kernel_log_from_text(text, kNow, "file");
  EXPECT_EQ(report::read(event(log, "xid", kGpuA, 154), report::xid_recovery_action), "none");
  EXPECT_TRUE(xid::judge_gpu(log, kGpuA).problems.empty());
}

// The catalogue holds the codes fleets watch, each with its meaning and, where it has one, an action of the vocabulary.
TEST(KernelLog, TheCatalogueHasTheWatchedCodes) {
  for (int code : {13, 31, 43, 48, 63, 64, 74, 79, 92, 94, 95, 119, 120, 154}) {
    const xid::XidInfo i = xid::find_xid(code);
    EXPECT_EQ(i.code, code);
    EXPECT_EQ(i.meaning.find("not in this suite's table"), std::string::npos) << code;
  }
  for (int code : {48, 79, 95, 119, 120}) EXPECT_TRUE(xid::find_xid(code).unusable) << code;
  for (int code : {13, 31, 43, 63, 92, 94}) EXPECT_FALSE(xid::find_xid(code).unusable) << code;
  for (const auto& i : xid::catalogue()) {
    EXPECT_FALSE(i.meaning.empty());
    EXPECT_TRUE(!i.unusable || (i.action && node_at_fault(*i.action))) << i.code;  // unusable: the node's to fix
  }
  EXPECT_NE(xid::find_xid(4242).meaning.find("not in this suite's table"), std::string::npos);
}

// The signature: the report's kernel log for the run's GPU confirms it, and its action is the events'.
TEST(KernelLog, TheSignatureIsConfirmedByTheReportsKernelLog) {
  json report = json::object();
  report["device"] = {{"pci_bus_id", kGpuB}};
  report["host"] = {{"kernel_log", machine::kernel_log_from_text(recorded(), kNow, "file")}};
  const SignatureFacts f = signature_facts(report, "unset");
  EXPECT_EQ(f.xid_action, Action::DrainNode);
  const std::string message = "the kernel log shows, for GPU 0 (00000000:3B:00.0), since the driver's last load: ...";
  const auto d = diagnose(Code::GpuUnhealthy, message, f);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->id, "gpu-xid-unusable");
  EXPECT_EQ(d->kind, Action::DrainNode);
  EXPECT_NE(d->cause.find("Xid 79 (GPU has fallen off the bus)"), std::string::npos) << d->cause;
  report["device"]["pci_bus_id"] = kGpuA;  // the other GPU: its events do not confirm it
  const SignatureFacts other = signature_facts(report, "unset");
  EXPECT_FALSE(other.xid_action);
  EXPECT_FALSE(diagnose(Code::GpuUnhealthy, message, other));  // and NVML's row wants NVML's words
}

}  // namespace
}  // namespace kd
