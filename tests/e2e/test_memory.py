"""Layer L5 (memory) with the real binary. On the CPU the workload runs through its phases in
host memory and the allocator checks are visible skips, never passes; without a GPU the default
device stops at L2 first; --memory-fraction and the leak fault reach the worker and the report."""
import json
import os
import unittest

from kd import BACKEND, DiagnosticTest, HAVE_PROBE, expected_default_code, machine_has_gpu, needs_probe

ALLOCATOR_CHECKS = ["Steps", "EmptyCache", "Growth"]
# L5 also sweeps its operating range (tests/e2e/test_range.py): kept short here, where it is not the subject.
SHORT_RANGE = ("--range-budget", "2")


def layer(report, layer_id):
    return next(l for l in report["layers"] if l["id"] == layer_id)


@needs_probe
class MemoryLayerOnCpu(DiagnosticTest):
    def test_l5_on_cpu_runs_the_phases_and_skips_the_allocator_checks_visibly(self):
        r = self.run_kd("--device", "cpu", "--layers", "L5", *SHORT_RANGE)
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)  # L3 ran as a prerequisite, as with L6 on the CPU
        tests = {t["name"]: t for t in layer(r.report, "L5")["tests"]}
        self.assertEqual(list(tests), ["Phases"] + ALLOCATOR_CHECKS + ["OperatingRange"])
        self.assertEqual(tests["Phases"]["status"], "passed")
        for name in ALLOCATOR_CHECKS:
            self.assertEqual(tests[name]["status"], "skipped", name)
            self.assertIn("not supported on CPU: ", tests[name]["message"])
        self.assertIn(f"(2/{len(tests)} passed)", r.layer_line("L5"))
        self.assertEqual(layer(r.report, "L5")["status"], "passed")
        m = r.report["memory"]
        self.assertEqual(m["device"], "cpu")
        self.assertIsNone(m["steps"])  # no allocator counters on the CPU: null, not zeros
        self.assertIsNone(m["fraction"])
        self.assertEqual(m["iterations"], {"n": 20, "allocated_bytes": None, "leak_injected": False})
        self.assertEqual(m["weights_bytes"], (1 << 19) * 32 * 4)
        self.assertEqual(m["activation_bytes"], 8 * 16384 * 32 * 4)
        self.assertIn("up to 16384 tokens", m["workload"])
        self.assertNotIn("oom", m)
        self.assertIsNone(r.report["requested"]["memory_fraction"])
        self.assertIn("Memory (cpu): the workload ran 20 iterations; no allocator counters on this device", r.stdout)

    def test_a_plain_run_has_no_memory_section_and_full_includes_l5(self):
        plain = self.run_kd("--device", "cpu")
        self.assertIsNone(plain.report["memory"])
        self.assertEqual(layer(plain.report, "L5")["status"], "not_run")
        full = self.run_kd("--device", "cpu", "--full", *SHORT_RANGE)
        self.assertVerdict(full, "CPU_CHECK_PASSED", 0)
        self.assertIn("L5", full.report["requested"]["layers"])
        self.assertEqual(full.report["memory"]["device"], "cpu")

    def test_a_leak_fault_that_cannot_act_is_a_usage_error(self):
        # On the CPU the growth is a visible skip, so an injected leak would end in a pass with a warning;
        # without L5 it would not run at all. Either way nothing was injected: a usage error, no report.
        for args, needle in ((["--device", "cpu", "--layers", "L5", "--inject-fault", "leak"], "--device cpu"),
                             (["--device", "cpu", "--layers", "L5", "--inject-fault", "range-leak"], "--device cpu"),
                             (["--inject-fault", "leak"], "--layers L5"),
                             (["--layers", "L1,L3", "--inject-fault", "range-leak"], "--layers L5")):
            bad = self.run_kd(*args, *SHORT_RANGE, report=False)
            self.assertEqual(bad.rc, 2, args)
            self.assertIn("--inject-fault", bad.stderr)
            self.assertIn(needle, bad.stderr)

    def test_memory_fraction_is_a_usage_error_on_the_cpu_and_out_of_range(self):
        for args, needle in ((["--device", "cpu", "--memory-fraction", "0.5"], "--device cpu"),
                             (["--memory-fraction", "0"], "'0'"), (["--memory-fraction", "2"], "'2'")):
            bad = self.run_kd("--layers", "L5", *args, report=False)
            self.assertEqual(bad.rc, 2, args)
            self.assertIn("--memory-fraction", bad.stderr)
            self.assertIn(needle, bad.stderr)
            self.assertNotIn("Verdict:", bad.stdout)

    def test_the_bundle_carries_the_memory_observations(self):
        folder = os.path.join(self.dir, "bundle")
        r = self.run_kd("--device", "cpu", "--layers", "L5", "--bundle", folder, *SHORT_RANGE)
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        memory = json.load(open(os.path.join(folder, "memory.json")))
        self.assertEqual(memory["observations"], r.report["memory"])
        self.assertIn("from L5", memory["note"])


class MemoryLayerOnTheDefaultDevice(DiagnosticTest):
    @unittest.skipIf(machine_has_gpu(), "this machine has a GPU: scripts/gpu-verify checks L5 there")
    def test_without_a_gpu_l5_stops_at_the_earlier_layer_first(self):
        code, exit_code = expected_default_code()
        r = self.run_kd("--layers", "L5", "--memory-fraction", "0.5")
        self.assertVerdict(r, code, exit_code)
        if HAVE_PROBE:
            self.assertTrue(r.report["stage"].startswith("L2."), r.report["stage"])
            self.assertEqual(r.report["requested"]["memory_fraction"], 0.5)
            tests = {t["name"]: t["status"] for t in layer(r.report, "L5")["tests"]}
            self.assertEqual(tests["Phases"], "failed")  # it reports its prerequisite's code, never a pass
            self.assertEqual({tests[n] for n in ALLOCATOR_CHECKS}, {"skipped"})
            self.assertIsNone(r.report["memory"])
        # The backend the run found is the one CMake built it against (kd-build.json): none without a probe.
        self.assertEqual(r.report["pytorch"]["backend"], BACKEND if HAVE_PROBE else None)


if __name__ == "__main__":
    unittest.main()
