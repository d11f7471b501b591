"""--summary-md writes the Markdown job summary: a new file only, agreeing with the report."""
import os
import unittest

from kd import DiagnosticTest, expected_default_code, needs_probe, read


class SummaryMarkdown(DiagnosticTest):
    def md_path(self, name="summary.md"):
        return os.path.join(self.dir, name)

    @needs_probe
    def test_cpu_pass_summary_agrees_with_the_report(self):
        md = self.md_path()
        r = self.run_kd("--device", "cpu", "--summary-md", md)
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        self.assertTrue(r.report["requested"]["summary_file"])
        self.assertIn(f"Summary: {md}\n", r.stdout)
        text = read(md)
        self.assertIn("### kernodeck-diagnostic: ✅ `CPU_CHECK_PASSED`", text)
        self.assertIn("| Verdict | `CPU_CHECK_PASSED` (exit 0), passed |", text)
        self.assertNotIn("injected", text)
        self.assertIn("| Stage | `L3.gradients` |", text)  # the last step that passed: synchronize is skipped on a CPU
        self.assertEqual(r.report["stage"], "L3.gradients")
        self.assertIn("| Next action | conclude nothing about CUDA or ROCm |", text)
        self.assertIn("| Check | product and gradient verified on cpu, loss 196.0 |", text)
        self.assertIn(f"run `{r.report['run_id']}`", text)
        self.assertIn(f"| LibTorch | {r.report['pytorch']['version']} (", text)
        for layer in ("L1", "L2", "L3"):
            self.assertRegex(text, rf"\n\| {layer} \| [^|]+\| passed \| \d+/\d+ \|")
        self.assertNotIn(self.dir, text, "the summary names no path")

    @needs_probe
    def test_an_injected_fault_is_marked_in_the_heading_and_the_verdict(self):
        md = self.md_path()
        r = self.run_kd("--device", "cpu", "--inject-fault", "oom", "--summary-md", md)
        self.assertVerdict(r, "OUT_OF_MEMORY", 9, "L3.product")
        text = read(md)
        self.assertTrue(text.startswith("### kernodeck-diagnostic: ❌ `OUT_OF_MEMORY` — injected fault oom: test only, "
                                        "not a diagnosis\n"), text)
        self.assertIn("| Verdict | `OUT_OF_MEMORY` (exit 9), **failed** — **injected fault oom: test only, not a "
                      "diagnosis** |", text)

    def test_default_run_summary_names_the_failing_code_and_stage(self):
        code, exit_code = expected_default_code()
        md = self.md_path()
        r = self.run_kd("--summary-md", md)
        self.assertVerdict(r, code, exit_code)
        text = read(md)
        self.assertIn(f"| Verdict | `{code}` (exit {exit_code}), ", text)
        stage = r.report["stage"]
        self.assertIn(f"| Stage | `{stage}` |" if stage else "| Stage | — |", text)
        plain = text.replace("\\", "")  # without Markdown's escapes
        self.assertIn(f"| Next action | {r.report['next_action']} |", plain)
        if r.report["error"]:
            self.assertIn(f"| Action | `{r.report['error']['action']}` |", plain)
        error = r.report["error"] or {"message": "", "cause": None}  # null on a machine where the check passes
        if error["message"]:
            self.assertIn(f"| Error | {error['message']} |", plain)
        if error["cause"] is not None:  # the terminal's cause, not the raw message
            self.assertIn(f"| Cause | {error['cause']} |", plain)
            self.assertIn(f"| Signature | `{error['signature']}` |", plain)
            self.assertIn(f"  cause: {error['cause']} [{error['signature']}]\n", r.stdout)
        self.assertIn(f"  next:  {r.report['next_action']}\n", r.stdout)  # the same next action as the terminal

    def test_existing_file_is_never_overwritten(self):
        md = self.md_path()
        with open(md, "w") as f:
            f.write("precious")
        r = self.run_kd("--summary-md", md, report=False)
        self.assertEqual(r.rc, 12, r.stderr)
        self.assertIn("OUTPUT_WRITE_FAILED", r.stderr)
        self.assertNotIn("[ RUN      ]", r.stdout)  # refused before anything ran
        self.assertEqual(read(md), "precious")

    def test_summary_that_cannot_be_written_is_recorded_in_the_report(self):
        r = self.run_kd("--device", "cpu", "--summary-md", "/proc/kd-summary.md")
        self.assertEqual(r.rc, 12, r.stdout[-2000:] + r.stderr)
        if r.report is not None:  # written when the folder passed the first check (root)
            self.assertVerdict(r, "OUTPUT_WRITE_FAILED", 12, "summary")
        self.assertFalse(os.path.exists("/proc/kd-summary.md"))

    def test_no_summary_is_left_when_the_report_cannot_be_saved(self):
        md = self.md_path()
        r = self.run_kd("--device", "cpu", "--summary-md", md, "--output", "/proc/kd-report.json", report=False)
        self.assertEqual(r.rc, 12, r.stdout[-2000:] + r.stderr)
        self.assertEqual(os.listdir(self.dir), [], "a summary contradicting the exit code must not stay")


if __name__ == "__main__":
    unittest.main()
