"""Layer L6 (timing) with the real binary on the CPU: the segments with the cold run apart;
the device ceilings are GPU measurements, so here they are visible skips, never passes."""
import unittest

from kd import DiagnosticTest, needs_probe

CEILINGS = ["CopyBandwidth", "MatmulBf16", "MatmulFp32", "MatmulTf32"]


@needs_probe
class TimingLayer(DiagnosticTest):
    def test_l6_on_cpu_times_the_segments_and_skips_the_ceilings_visibly(self):
        r = self.run_kd("--device", "cpu", "--layers", "L6")
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)  # L3 ran as a prerequisite
        l6 = next(l for l in r.report["layers"] if l["id"] == "L6")
        status = {t["name"]: t for t in l6["tests"]}
        self.assertEqual(status["Segments"]["status"], "passed")
        for name in CEILINGS:
            self.assertEqual(status[name]["status"], "skipped", name)
            self.assertIn("not supported on CPU", status[name]["message"])
        self.assertIn(f"(1/{len(status)} passed)", r.layer_line("L6"))
        seg = r.report["timing"]["segments"]
        self.assertEqual(seg["warm"]["n"], 20)
        self.assertIsNone(seg["cold"]["compute_event_ms"])  # no CUDA events on the CPU
        self.assertIsNone(seg["warm"]["compute_event_ms"])
        for part in ("prepare_ms", "compute_ms", "write_ms"):
            self.assertGreaterEqual(seg["cold"][part], 0)
            self.assertLessEqual(seg["warm"][part]["median"], seg["warm"][part]["p95"])
        self.assertGreaterEqual(seg["load_ms"], 0)
        self.assertIn("device cpu", seg["workload"])
        self.assertNotIn("ceilings", r.report["timing"])
        self.assertIn("Timing: compute cold", r.stdout)
        self.assertEqual(r.report["requested"]["min_bandwidth_fraction"], 0.6)
        self.assertEqual(r.report["requested"]["min_matmul_fraction"], 0.5)

    def test_floors_reach_the_report_and_bad_floors_are_usage_errors(self):
        r = self.run_kd("--device", "cpu", "--layers", "L6", "--min-bandwidth-fraction", "0.75",
                        "--min-matmul-fraction=0.4")
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        self.assertEqual(r.report["requested"]["min_bandwidth_fraction"], 0.75)
        self.assertEqual(r.report["requested"]["min_matmul_fraction"], 0.4)
        bad = self.run_kd("--device", "cpu", "--layers", "L6", "--min-matmul-fraction", "1.5", report=False)
        self.assertEqual(bad.rc, 2)
        self.assertIn("--min-matmul-fraction must be a fraction from 0 to 1, not '1.5'", bad.stdout + bad.stderr)

    def test_full_includes_l6(self):
        r = self.run_kd("--device", "cpu", "--full", "--range-budget", "2")  # a short L5 sweep
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        self.assertIn("L6", r.report["requested"]["layers"])
        self.assertIsNotNone(r.report["timing"]["segments"])


if __name__ == "__main__":
    unittest.main()
