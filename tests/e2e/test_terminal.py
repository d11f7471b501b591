"""What a person sees on the terminal (issue "First contact"): one line per layer, GoogleTest's own output only
with --verbose, --quiet, --version, colour (a pseudo-terminal, NO_COLOR, --color), --output -, --help, and the
README's sample output against a real run."""
import glob
import json
import os
import pty
import re
import select
import subprocess
import time
import unittest

from kd import BIN, BUILD, DiagnosticTest, machine_has_gpu, needs_probe, validate

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
ESC = "\x1b["


def run_on_pty(argv, env=None, timeout=120):
    """Runs argv with stdout and stderr on a pseudo-terminal; returns (exit code, everything it printed)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(argv, stdout=slave, stderr=slave, stdin=subprocess.DEVNULL, env=env, close_fds=True)
    os.close(slave)
    out, deadline = b"", time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every writer has closed the terminal
                break
            if not chunk:
                break
            out += chunk
        elif proc.poll() is not None:
            break
    os.close(master)
    return proc.wait(timeout=10), out.decode(errors="replace")


def normalized(text):
    """A run's text with what changes from run to run (run id, times, the LibTorch found) made neutral."""
    text = re.sub(r"run [0-9a-f]{16}", "run <id>", text)
    text = re.sub(r"\d+\.\d\d s\b", "<t> s", text)
    text = re.sub(r"^LibTorch: .*$", "LibTorch: <version>", text, flags=re.M)
    return [l.rstrip() for l in text.strip("\n").splitlines() if not l.startswith("Report: ")]


SAMPLE = re.compile(r"<!-- sample: (\S+)(?: log: (\S+))? -->\s*```\n(.*?)```", re.S)


def samples(path):
    """[(name, log, text)]: the code blocks that follow '<!-- sample: NAME log: LOG -->' in a Markdown file (LOG
    relative to it, or None when the marker names none)."""
    with open(path) as f:
        return SAMPLE.findall(f.read())


def readme_sample(name):
    """The text of README.md's sample NAME."""
    found = [text for n, _, text in samples(os.path.join(ROOT, "README.md")) if n == name]
    assert found, f"README.md has no sample '{name}'"
    return found[0]


@needs_probe
class Terminal(DiagnosticTest):
    def test_a_cpu_run_is_one_line_per_layer_and_the_verdict(self):
        r = self.run_kd("--device", "cpu")
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        lines = r.stdout.strip("\n").splitlines()
        self.assertLessEqual(len(lines), 15, r.stdout)
        self.assertTrue(lines[0].startswith("kernodeck-diagnostic "), lines[0])
        self.assertEqual([l.split()[0] for l in lines if l.startswith("  L")], ["L1", "L2", "L3"])
        for gtest in ("[ RUN", "[  SKIPPED ]", "[==========]", ".cpp:", "Google Test"):
            self.assertNotIn(gtest, r.stdout)
        self.assertRegex(r.layer_line("L3"), r"^  L3  tiny op +passed +\(4/5 passed\) +\d+\.\d\d s$")

    def test_verbose_adds_googletests_own_output(self):
        r = self.run_kd("--device", "cpu", "-v")
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        self.assertIn("[  SKIPPED ] L2_BackendDevice.GpuAvailable", r.stdout)  # what ctest's skip detection reads
        self.assertIn("[       OK ] L3_TinyOp.Product", r.stdout)
        self.assertIn("  L3  tiny op", r.stdout)  # the layers at the end, after GoogleTest's lines

    def test_quiet_prints_the_verdict_line_only(self):
        r = self.run_kd("--device", "cpu", "-q")
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        self.assertEqual(r.stdout, "Verdict: CPU_CHECK_PASSED (exit 0)\n")
        r = self.run_kd("--quiet", "--device-index", "1023")  # fails at L2 on any machine: no such GPU (or none)
        self.assertNotEqual(r.rc, 0)
        self.assertEqual(r.stdout.count("\n"), 1, r.stdout)
        self.assertRegex(r.stdout, r"^Verdict: [A-Z_]+ \(exit %d\) at stage L2\.\w+\n$" % r.rc)

    def test_an_injected_fault_is_marked_wherever_the_verdict_is_shown(self):
        mark = " [injected fault wrong-product: test only, not a diagnosis]"
        r = self.run_kd("--device", "cpu", "-q", "--inject-fault", "wrong-product")
        self.assertVerdict(r, "CHECK_FAILED", 8, "L3.product")
        self.assertEqual(r.stdout, "Verdict: CHECK_FAILED (exit 8) at stage L3.product" + mark + "\n")
        r = self.run_kd("--device", "cpu", "--inject-fault", "wrong-product")
        self.assertIn("\nVerdict: CHECK_FAILED (exit 8) at stage L3.product" + mark + "\n", r.stdout)
        self.assertIn("  warning: test-only fault injection 'wrong-product' was active: this is not a diagnosis", r.stdout)
        # A run whose selection the fault never reached passes, marked all the same: it is no machine's result.
        r = self.run_kd("--device", "cpu", "-q", "--layers", "L1", "--inject-fault", "wrong-product")
        self.assertEqual(r.stdout, "Verdict: SELECTED_TESTS_PASSED (exit 0)" + mark + "\n")
        r = self.run_kd("--device", "cpu", "-q")
        self.assertNotIn("injected", r.stdout)

    def test_verbose_and_quiet_together_are_a_usage_error(self):
        r = self.run_kd("-v", "-q", report=False)
        self.assertEqual(r.rc, 2)
        self.assertIn("--verbose and --quiet", r.stderr)
        self.assertEqual(r.stderr.count("--help"), 1, r.stderr)  # says where to look, once

    def test_output_dash_puts_the_report_alone_on_stdout(self):
        r = self.run_kd("--device", "cpu", "--output", "-", report=False, cwd=self.dir)
        self.assertEqual(r.rc, 0, r.stderr)
        report = json.loads(r.stdout)  # the whole of stdout is one JSON document
        validate(report)
        self.assertEqual((report["code"], report["exit_code"]), ("CPU_CHECK_PASSED", 0))
        self.assertIn("Verdict: CPU_CHECK_PASSED (exit 0)", r.stderr)
        self.assertIn("  L1  runtime & import", r.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "-")), "no file named '-'")
        r = self.run_kd("--device", "cpu", "--output", "-", "-v", report=False)
        self.assertEqual(json.loads(r.stdout)["code"], "CPU_CHECK_PASSED")  # GoogleTest's lines went to stderr
        self.assertIn("[       OK ] L3_TinyOp.Product", r.stderr)

    def test_version(self):
        r = self.run_kd("--version", report=False)
        self.assertEqual(r.rc, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertRegex(lines[0], r"^kernodeck-diagnostic \d+\.\d+\.\d+$")
        kind = "CUDA build" if BUILD.backend == "cuda" else "CPU-only build"
        self.assertTrue(lines[1].startswith(f"LibTorch: {BUILD.torch_version} ({kind}"), lines[1])
        self.assertTrue(lines[2].startswith("source revision: "), lines[2])

    def test_help_has_examples_and_names_the_docs(self):
        r = self.run_kd("--help", report=False)
        self.assertEqual(r.rc, 0)
        self.assertIn("Examples:", r.stdout)
        self.assertIn("--layers L3", r.stdout)
        self.assertIn("docs/command-line.md", r.stdout)
        for option in ("--verbose", "--quiet", "--color WHEN", "--version"):
            self.assertIn(option, r.stdout)


@needs_probe
class Colour(DiagnosticTest):
    def env(self, **extra):
        env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
        env.update(extra)
        return env

    def test_a_terminal_gets_colour_and_a_progress_line(self):
        rc, out = run_on_pty([BIN, "--device", "cpu"], env=self.env())
        self.assertEqual(rc, 0, out)
        self.assertIn(ESC + "32", out)  # green
        # The layer in progress is drawn, then overwritten by its finished line.
        self.assertRegex(out, r"\r\x1b\[K  L1  runtime & import +running \w+ \(\d+ done\)")
        self.assertRegex(out, r"\r\x1b\[K  L1  runtime & import +(?:\x1b\[[0-9;]*m)+passed")

    def test_no_color_and_color_never_turn_it_off(self):
        for env, args in ((self.env(NO_COLOR="1"), []), (self.env(), ["--color", "never"])):
            rc, out = run_on_pty([BIN, "--device", "cpu", *args], env=env)
            self.assertEqual(rc, 0, out)
            self.assertNotRegex(out, r"\x1b\[[0-9;]*m", args)
            self.assertIn("Verdict: CPU_CHECK_PASSED (exit 0)", out)

    def test_a_pipe_gets_none_unless_always(self):
        r = self.run_kd("--device", "cpu", env=self.env())
        self.assertNotIn(ESC, r.stdout)
        r = self.run_kd("--device", "cpu", "--color", "always", env=self.env())
        self.assertIn(ESC + "32", r.stdout)
        self.assertNotIn("running", r.stdout)  # progress lines are for a terminal only
        r = self.run_kd("--color", "sometimes", report=False)
        self.assertEqual(r.rc, 2)


class SampleLogs(unittest.TestCase):
    def test_every_sample_is_quoted_verbatim_from_the_log_it_names(self):
        # A sample shows real output: each names its committed log, and its lines are that log's, as they are.
        files = [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
        names = []
        for path in files:
            for name, log, text in samples(path):
                with self.subTest(file=os.path.relpath(path, ROOT), sample=name):
                    self.assertTrue(log, "the sample names no log")
                    with open(os.path.join(os.path.dirname(path), log)) as f:
                        self.assertIn(text, f.read())
                names.append(name)
        self.assertGreaterEqual(set(names), {"cpu-pass", "no-driver", "two-gpus"})


@needs_probe
class ReadmeSamples(DiagnosticTest):
    """README.md shows real output: the samples are compared with a run here, line by line."""

    def test_the_cpu_pass_sample(self):
        r = self.run_kd("--device", "cpu")
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        self.assertEqual(normalized(r.stdout), normalized(readme_sample("cpu-pass")))

    @unittest.skipUnless(BUILD.kind == "cuda" and not machine_has_gpu(),
                         "the sample is a CUDA build on a machine without a GPU driver")
    def test_the_no_driver_sample(self):
        r = self.run_kd()
        self.assertVerdict(r, "GPU_UNAVAILABLE", 6, "L2.gpu_available")
        host = r.report["host"]
        if not host["container"]["detected"] or host["nvidia"]["device_nodes"]:  # the cause is the machine's own
            self.skipTest("the sample is a container started without its GPUs; this machine is not one")
        self.assertEqual(normalized(r.stdout), normalized(readme_sample("no-driver")))


if __name__ == "__main__":
    unittest.main()
