"""--device-index all (every visible GPU, one verdict each) and the peer layer L7, with the real binary.
Here (no GPU) the all-GPU run gives the default run's code with no device verdicts; the peer layer on the
CPU is a visible skip. With two or more GPUs (scripts/gpu-verify), the GPU cases run too."""
import unittest

from kd import DiagnosticTest, expected_default_code, gpu_count, needs_probe

PEER_TESTS = ["Copy", "Bandwidth", "AllReduce"]


def layer(report, layer_id):
    return next(l for l in report["layers"] if l["id"] == layer_id)


class AllDevices(DiagnosticTest):
    @unittest.skipIf(gpu_count() > 0, "on a GPU machine: see the GPU cases below")
    def test_all_devices_without_a_gpu_gives_the_default_code_and_no_device_verdicts(self):
        code, exit_code = expected_default_code()
        r = self.run_kd("--device-index", "all")
        self.assertVerdict(r, code, exit_code)
        self.assertTrue(r.report["requested"]["all_devices"])
        self.assertIsNone(r.report["requested"]["device_index"])
        self.assertEqual(r.report["devices"], [])
        self.assertIsNone(r.report["device_index"])
        self.assertIsNone(r.report["peer"])  # no second GPU: the peer layer did not run
        self.assertIn("target every visible GPU", r.stdout)
        self.assertIn("GPUs checked: none visible", r.stdout)
        if exit_code == 6:
            self.assertEqual(r.report["stage"], "L2.gpu_available")
            self.assertEqual(r.report["pytorch"]["visible_device_count"], 0)

    def test_all_devices_refuses_cpu_in_process_and_gtest_flags(self):
        for args, names in ((["--device", "cpu"], "--device cpu"), (["--in-process"], "--in-process"),
                            (["--gtest_filter=L3_*"], "--layers")):
            r = self.run_kd("--device-index", "all", *args, report=False)
            self.assertEqual(r.rc, 2, r.stderr)
            self.assertIn("usage error", r.stderr)
            self.assertIn(names, r.stderr)

    @needs_probe
    def test_peer_layer_on_the_cpu_is_a_visible_skip_never_a_pass(self):
        r = self.run_kd("--device", "cpu", "--layers", "L1,L7")
        self.assertVerdict(r, "SELECTED_TESTS_PASSED", 0)
        tests = {t["name"]: t for t in layer(r.report, "L7")["tests"]}
        self.assertEqual(sorted(tests), sorted(PEER_TESTS))
        for name in PEER_TESTS:
            self.assertEqual(tests[name]["status"], "skipped", name)
            self.assertIn("not supported on CPU", tests[name]["message"])
        self.assertIn("skipped  (0/3 passed)", r.layer_line("L7"))
        self.assertEqual(layer(r.report, "L7")["status"], "skipped")
        self.assertIsNone(r.report["peer"])
        # Alone, nothing was checked: that is said, not passed.
        alone = self.run_kd("--device", "cpu", "--layers", "L7")
        self.assertEqual(alone.rc, 2, alone.stdout[-2000:])
        self.assertIsNone(alone.report)  # a usage error writes no report (issue 17)
        self.assertIn("every selected test was skipped", alone.stdout)

    @needs_probe
    def test_full_on_the_cpu_includes_the_peer_layer_as_a_skip(self):
        r = self.run_kd("--device", "cpu", "--full")
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        self.assertIn("L7", r.report["requested"]["layers"])
        self.assertEqual(layer(r.report, "L7")["status"], "skipped")

    @unittest.skipIf(gpu_count() > 0, "on a GPU machine: see the GPU cases below")
    def test_peer_layer_without_a_gpu_gives_the_default_code(self):
        code, exit_code = expected_default_code()
        r = self.run_kd("--layers", "L7")
        self.assertVerdict(r, code, exit_code)


@unittest.skipUnless(gpu_count() >= 2, f"needs 2 GPUs; {gpu_count()} visible")
class AllDevicesOnGpus(DiagnosticTest):
    def test_every_gpu_gets_a_verdict_and_every_pair_a_verified_copy(self):
        n = gpu_count()
        r = self.run_kd("--device-index", "all", "--timeout", "120")
        self.assertVerdict(r, "GPU_CHECK_PASSED", 0)
        self.assertEqual([d["index"] for d in r.report["devices"]], list(range(n)))
        self.assertTrue(all(d["exit_code"] == 0 for d in r.report["devices"]))
        peer = r.report["peer"]
        self.assertEqual(len(peer["copies"]), n * (n - 1))
        self.assertTrue(all(c["verified"] for c in peer["copies"]))
        for i in range(n):
            for j in range(n):
                self.assertEqual(peer["bandwidth"]["matrix"][i][j] is None, i == j)
        self.assertIn("Peer copies", r.stdout)

    def test_one_visible_gpu_gives_one_verdict_and_no_peer_layer(self):
        import os
        r = self.run_kd("--device-index", "all", env={**os.environ, "CUDA_VISIBLE_DEVICES": "0"})
        self.assertVerdict(r, "GPU_CHECK_PASSED", 0)
        self.assertEqual(len(r.report["devices"]), 1)
        self.assertIsNone(r.report["peer"])

    def test_a_wrong_copy_is_check_failed_naming_the_pair(self):
        r = self.run_kd("--layers", "L7", "--inject-fault", "wrong-product", "--timeout", "120")
        self.assertVerdict(r, "CHECK_FAILED", 8, "L7.copy")
        self.assertIn("GPU 0 -> GPU 1", r.report["error"]["message"])


if __name__ == "__main__":
    unittest.main()
