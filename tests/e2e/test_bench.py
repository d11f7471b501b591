"""scripts/bench's measurement (bench/bench.py), where it needs no GPU: a tree of processes whose parent exits before
its child, measured to the verdict and to the end, its largest process and its sum at the peak; then the CPU
comparison of the diagnostic with the minimal program (--device cpu)."""
import json
import os
import subprocess
import sys
import unittest

from kd import BIN, BUILD, DiagnosticTest, needs_probe

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, "bench")
MINIMAL = os.path.join(os.path.dirname(BIN), "kd_minimal_check")

# A parent of 60 MiB that starts a child of 120 MiB, waits until the child holds it, then exits at once; the child
# stays 1 s more: the parent's exit is the "verdict", the child's the end, and both were resident together.
# (Started anew, not forked: a forked child would share, and count again, its parent's pages.)
TREE = r"""
import subprocess, sys, time
parent = bytearray(60 << 20)
child = subprocess.Popen([sys.executable, "-c", "import sys, time; b = bytearray(120 << 20); print(flush=True); "
                          "time.sleep(1.0)"], stdout=subprocess.PIPE)
child.stdout.readline()
time.sleep(0.2)
"""


class TreeMeasurement(DiagnosticTest):
    def test_the_tree_is_measured_to_its_end_and_summed_at_its_peak(self):
        driver = f"import json, sys; sys.path.insert(0, {BENCH!r}); import bench; bench.become_subreaper(); " \
                 f"print(json.dumps(bench.run([sys.executable, '-c', {TREE!r}])))"
        out = subprocess.run([sys.executable, "-c", driver], capture_output=True, text=True, timeout=60)
        self.assertEqual(out.returncode, 0, out.stderr)
        m = json.loads(out.stdout)
        self.assertEqual(m["exit"], 0)
        self.assertGreater(m["verdict_s"], 0.2)
        self.assertGreater(m["end_s"], m["verdict_s"] + 0.7)  # the child's second after its parent's exit
        self.assertGreaterEqual(m["largest_mib"], 120)  # the child: ru_maxrss of the one reaped after the parent
        self.assertLess(m["largest_mib"], 120 + 60)  # never the sum
        self.assertGreaterEqual(m["tree_mib"], 180)  # both at once, added up
        self.assertGreater(m["tree_mib"], m["largest_mib"] + 40)


@needs_probe
@unittest.skipUnless(os.path.exists(MINIMAL), "the minimal program (kd_minimal_check) is not built here")
class CpuComparison(DiagnosticTest):
    def test_the_cpu_comparison_names_each_ratio(self):
        path = os.path.join(self.dir, "bench.json")
        out = subprocess.run([sys.executable, os.path.join(BENCH, "bench.py"), "--diagnostic", BIN, "--minimal", MINIMAL,
                              "--python-check", os.path.join(BENCH, "check.py"), "--device", "cpu", "--rounds", "1",
                              "--warmup", "0", "--full-rounds", "0", "--json", path],
                             capture_output=True, text=True, timeout=300)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        with open(path) as f:
            figures = json.load(f)
        self.assertNotIn("gpu", figures)
        self.assertEqual(sorted(figures["ratios"]), ["cpu_end_A_over_B", "cpu_largest_process_rss_A_over_B",
                                                     "cpu_tree_rss_A_over_B", "cpu_verdict_A_over_B"])
        a = figures["cpu"]["A"]
        self.assertGreaterEqual(a["end_s"]["median"], a["verdict_s"]["median"])
        self.assertGreaterEqual(a["tree_mib"]["median"], 0.9 * a["largest_mib"]["median"])  # sampled: a peak can be missed
        for name in figures["ratios"]:
            self.assertIn(name, out.stdout)
        self.assertIn("CPU A/B to the verdict", out.stdout)


class FreshCloneMedians(unittest.TestCase):
    """scripts/bench --fresh-clone --rounds N (bench/fresh_clone.py) takes the median round of each side, whole: the
    phases printed beside a median total are that one run's, never medians of each phase."""

    def test_the_median_round_is_one_run_and_the_lower_middle_of_an_even_count(self):
        sys.path.insert(0, BENCH)
        import fresh_clone
        rows = [{"total_s": t, "build_s": b} for t, b in ((22.0, 17.0), (21.0, 16.5), (29.0, 17.7), (21.5, 15.0))]
        self.assertEqual(fresh_clone.median_of(rows), {"total_s": 21.5, "build_s": 15.0})
        self.assertEqual(fresh_clone.median_of(rows[:3]), {"total_s": 22.0, "build_s": 17.0})
        self.assertEqual(fresh_clone.median_of(rows[:1]), rows[0])
