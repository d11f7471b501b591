"""Help, test listing, and selections that check nothing (exit 2). Bad options and values: scenarios.py."""
import os
import shutil
import subprocess
import tempfile
import unittest

from kd import BIN, FULL, DiagnosticTest, needs_probe

# Every test, in the contract's order: suites/layers.cpp's one list. Both programs register it whatever their
# link order and unity steps (kernodeck-diagnostic links L1-L3's code only, kernodeck-diagnostic-full every layer's).
CONTRACT_ORDER = """L1_RuntimeImport.
  RuntimeFacts
  LibTorchLoads
  PythonTorch
L2_BackendDevice.
  BackendDeclared
  GpuAvailable
  DeviceIndex
  DeviceProperties
  Health
L3_TinyOp.
  Inputs
  Product
  Loss
  Gradients
  Synchronize
L4_App.
  Embeddings
  TrainingStep
  ExtensionLoad
  ModelLoad
  ModelContract
  AcrossDevices
  AcrossDevicesModel
  StopResume
L5_Memory.
  Phases
  Steps
  EmptyCache
  Growth
  OperatingRange
L6_Timing.
  Segments
  CopyBandwidth
  MatmulBf16
  MatmulFp32
  MatmulTf32
  HostLink
  SustainedThroughput
  SustainedResults
  MemoryIntegrity
L7_Peer.
  Copy
  Bandwidth
  AllReduce
L8_Collective.
  Join
  AllReduce
  Broadcast
  Barrier
  Bandwidth
"""


def listing(binary, *args):
    proc = subprocess.run([binary, *args, "--gtest_list_tests"], capture_output=True, text=True, timeout=30)
    return proc.returncode, proc.stdout


class Usage(DiagnosticTest):
    # Bad values of every option are rows of the fault matrix (scenarios.py, USAGE).

    def test_help(self):
        proc = subprocess.run([BIN, "--help"], capture_output=True, text=True, timeout=30)
        self.assertEqual(proc.returncode, 0)
        for option in ("--device", "--device-index", "--timeout", "--output", "--layers"):
            self.assertIn(option, proc.stdout)

    def test_list_tests_in_layer_order(self):
        proc = subprocess.run([BIN, "--gtest_list_tests"], capture_output=True, text=True, timeout=30)
        self.assertEqual(proc.returncode, 0)
        suites = [l.rstrip(".") for l in proc.stdout.splitlines() if l and not l.startswith(" ")]
        self.assertEqual(suites, ["L1_RuntimeImport", "L2_BackendDevice", "L3_TinyOp"])

    def test_both_programs_list_every_test_in_the_contracts_order(self):
        for binary in (BIN, FULL):
            self.assertEqual(listing(binary, "--full"), (0, CONTRACT_ORDER), binary)
        # GoogleTest's shuffle cannot reorder them (refused, the order is the contract), and a filter keeps the order.
        for args in (("--layers", "L6,L2"), ("--gtest_filter=L8_*:L1_*:L5_Memory.Growth",)):
            self.assertEqual(listing(BIN, *args), listing(FULL, *args), args)
        self.assertEqual(listing(BIN, "--gtest_filter=L8_*:L1_*")[1].splitlines()[0], "L1_RuntimeImport.")
        self.assertEqual(listing(BIN, "--full", "--gtest_shuffle")[0], 2)

    @needs_probe
    def test_selection_that_only_skips_checked_nothing(self):
        r = self.run_kd("--device", "cpu", "--gtest_filter=L2_BackendDevice.GpuAvailable")
        self.assertEqual(r.rc, 2, r.stdout[-2000:])
        self.assertIsNone(r.report)  # nothing was checked: no report says anything (issue 17)
        self.assertIn("Verdict: USAGE_ERROR (exit 2)", r.stdout)
        self.assertIn("skipped", r.stdout)

    def test_filter_matching_nothing_is_a_usage_error(self):
        r = self.run_kd("--gtest_filter=NoSuch.*")
        self.assertEqual(r.rc, 2)
        self.assertIsNone(r.report)
        self.assertIn("Verdict: USAGE_ERROR (exit 2)", r.stdout)


class ScriptsHelp(unittest.TestCase):
    """scripts/X --help prints the script's usage and exits 0, before it installs, builds or runs anything."""

    def test_every_script_with_options_answers_help_without_building(self):
        source = os.environ["KD_SOURCE_DIR"]
        folder = tempfile.mkdtemp(prefix="kd-help-")
        self.addCleanup(shutil.rmtree, folder, True)
        build = os.path.join(folder, "build")
        for script in ("bench", "setup", "build", "fault-matrix", "gpu-verify", "gpu-verify-rented-box", "minilm", "image"):
            for flag in ("--help", "-h"):
                r = subprocess.run([os.path.join(source, "scripts", script), flag], capture_output=True, text=True,
                                   timeout=30, env=dict(os.environ, KD_BUILD_DIR=build))
                self.assertEqual(r.returncode, 0, f"{script} {flag}: {r.stderr[-1000:]}")
                with open(os.path.join(source, "scripts", script)) as f:
                    first_line = f.read().splitlines()[1].lstrip("# ")
                self.assertTrue(r.stdout.startswith(first_line), f"{script} {flag}: {r.stdout[:300]}")
                self.assertFalse(os.path.exists(build), f"{script} {flag} made a build folder")


if __name__ == "__main__":
    unittest.main()
