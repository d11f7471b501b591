"""The kernel's Xid evidence (docs/health.md): --kernel-log-file (TEST ONLY) reads a recorded kernel log
(tests/data/kernel_log_xid.kmsg: two GPUs, an NVSwitch, a driver reload) in the supervisor (--host-check) and in the
worker of a GPU run; a log that cannot be read says so and why; the machine's own log is read or said unreadable."""
import json
import os
import shutil
import subprocess
import unittest

from kd import BIN, DiagnosticTest, HAVE_PROBE, expected_default_code, read, schema_validator
from sandbox import as_unprivileged

ROOT = os.environ["KD_SOURCE_DIR"]
RECORDED = os.path.join(ROOT, "tests", "data", "kernel_log_xid.kmsg")
AGGREGATE_SCHEMA = json.load(open(os.path.join(ROOT, "schema", "aggregate.schema.json")))


def events_by_key(log):
    return {(e["kind"], e["pci_bus_id"], e["code"]): e for e in log["events"]}


class KernelLog(DiagnosticTest):
    def cpu_check(self, *args, prefix=()):
        return self.run_kd("--device", "cpu", "--host-check", *args, prefix=prefix)

    def expected_cpu(self):
        return ("CPU_CHECK_PASSED", 0) if HAVE_PROBE else ("TORCH_MISSING", 3)

    def test_a_recorded_log_in_the_host_check(self):
        r = self.cpu_check("--kernel-log-file", RECORDED)
        self.assertVerdict(r, *self.expected_cpu())
        log = r.report["host"]["kernel_log"]
        self.assertEqual((log["readable"], log["source"], log["records"], log["from_boot"]), (True, "file", 28, True))
        events = events_by_key(log)
        self.assertEqual(len(events), 8)
        bus = events[("xid", "00000000:3B:00.0", 79)]
        self.assertEqual((bus["unusable"], bus["after_driver_load"], bus["action"], bus["count"]),
                         (True, True, "drain_node", 1))
        self.assertEqual(events[("xid", "00000000:1B:00.0", 48)]["after_driver_load"], False)  # before the reload
        self.assertEqual(events[("xid", "00000000:3B:00.0", 154)]["recovery_action"], "node_reboot")
        self.assertEqual(events[("sxid", "00000000:05:00.0", 12028)]["count"], 1)  # its detail lines are no events
        # The terminal's host lines say it; never a raw line of the log, in the report or on the terminal.
        line = next(l for l in r.stdout.splitlines() if l.startswith("Host kernel log: "))
        self.assertIn("file, 28 records since boot; the NVIDIA driver loaded", line)
        self.assertIn("00000000:3B:00.0 Xid 79 (GPU has fallen off the bus) x1", line)
        self.assertIn("[unusable until reset]", line)
        for secret in ("python3", "1652223019876", "Out Of Range"):
            self.assertNotIn(secret, r.stdout)
            self.assertNotIn(secret, json.dumps(r.report))
        # TEST ONLY: recorded, warned of, never this machine's.
        self.assertIs(r.report["requested"]["kernel_log_file"], True)
        self.assertIn("test-only kernel log (--kernel-log-file): the Xid evidence is that file's, not this machine's",
                      r.report["warnings"])

    def test_a_gpu_runs_worker_reads_it_while_libtorch_loads(self):
        code, exit_code = expected_default_code()
        r = self.run_kd("--kernel-log-file", RECORDED)
        if code == "GPU_CHECK_PASSED" or not HAVE_PROBE:
            self.skipTest("a GPU machine's L2.health is checked by scripts/gpu-verify-rented-box; none without LibTorch")
        self.assertVerdict(r, code, exit_code)
        log = r.report["host"]["kernel_log"]  # the worker's fact: it read the file itself
        self.assertEqual((log["source"], log["records"]), ("file", 28))
        self.assertLess(log["duration_ms"], 1000)

    def test_a_log_that_cannot_be_read_is_not_an_empty_one(self):
        missing = self.cpu_check("--kernel-log-file", os.path.join(self.dir, "missing.kmsg"))
        self.assertVerdict(missing, *self.expected_cpu())
        log = missing.report["host"]["kernel_log"]
        self.assertEqual((log["readable"], log["source"], log["events"]), (False, None, None))
        self.assertEqual(log["why_not"], "the file given by --kernel-log-file: No such file or directory")
        self.assertIn("Host kernel log: not readable: the file given by --kernel-log-file: No such file or directory "
                      "(no Xid evidence)", missing.stdout)
        # Mode 000, read as an unprivileged user (root reads anything).
        locked = os.path.join(self.dir, "locked.kmsg")
        shutil.copy(RECORDED, locked)
        os.chmod(locked, 0)
        prefix = as_unprivileged(self, self.dir)
        r = self.run_kd("--device", "cpu", "--host-check", "--kernel-log-file", locked, report=False, prefix=prefix)
        self.assertEqual(r.rc, self.expected_cpu()[1], r.stdout + r.stderr)
        self.assertIn("Host kernel log: not readable: the file given by --kernel-log-file: Permission denied", r.stdout)

    def test_the_machines_own_log_is_read_or_said_unreadable(self):
        r = self.cpu_check()
        self.assertVerdict(r, *self.expected_cpu())
        log = r.report["host"]["kernel_log"]
        self.assertNotIn("kernel_log_file", [k for k, v in r.report["requested"].items() if v is True])
        if log["readable"]:
            self.assertIn(log["source"], ("kmsg", "journal"))
            self.assertGreater(log["records"], 0)
            self.assertIsInstance(log["events"], list)
            self.assertIsNone(log["why_not"])
        else:
            self.assertIsNone(log["events"])
            self.assertTrue(log["why_not"].startswith("/dev/kmsg"), log["why_not"])
        # As an unprivileged user /dev/kmsg may be closed (kernel.dmesg_restrict): then said, with why.
        nobody = self.run_kd("--device", "cpu", "--host-check", report=False, prefix=as_unprivileged(self))
        line = next(l for l in nobody.stdout.splitlines() if l.startswith("Host kernel log: "))
        restricted = read("/proc/sys/kernel/dmesg_restrict").strip() == "1" and os.geteuid() == 0
        if restricted and not line.startswith("Host kernel log: journal, "):
            self.assertIn("not readable: /dev/kmsg: Operation not permitted (kernel.dmesg_restrict is 1: reading the "
                          "kernel log needs CAP_SYSLOG); journalctl", line)
        self.assertTrue(line.endswith("(no Xid evidence)") or " records" in line, line)

    def test_the_aggregate_lists_a_recorded_log_apart(self):
        r = self.cpu_check("--kernel-log-file", RECORDED)
        folder = os.path.join(self.dir, "reports")
        os.mkdir(folder)
        shutil.copy([os.path.join(self.dir, f) for f in os.listdir(self.dir) if f.startswith("report-")][0], folder)
        out = os.path.join(self.dir, "aggregate.json")
        p = subprocess.run([BIN, "aggregate", folder, "--output", out], capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        agg = json.loads(read(out))
        schema_validator(AGGREGATE_SCHEMA).validate(agg)
        self.assertEqual((agg["counts"]["counted"], agg["counts"]["injected"]), (0, 1))
        self.assertEqual(agg["injected"][0]["fault"], "kernel-log-file")


if __name__ == "__main__":
    unittest.main()
