"""The explicit CPU run: every field of the report, and the schema."""
import unittest

from kd import DiagnosticTest, needs_probe


@needs_probe
class CpuRun(DiagnosticTest):
    def test_cpu_pass_report(self):
        r = self.run_kd("--device", "cpu")
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        rep = r.report
        self.assertEqual(rep["status"], "passed")
        self.assertIsNone(rep["error"])
        self.assertEqual(rep["next_action"], "conclude nothing about CUDA or ROCm")
        self.assertRegex(rep["run_id"], "^[0-9a-f]{16}$")
        self.assertEqual(rep["requested"], {
            "device": "cpu", "device_index": None, "all_devices": False, "timeout_s": 30.0, "report_file": True, "summary_file": False,
            "layers": None,
            "gtest_filter": None, "in_process": False, "fault_injection": None, "gtest_environment_ignored": [], "host_check": False,
            "wait_for_gpu_release": False, "kernel_log_file": False, "metrics_file": False, "floors": False,
            "python": False, "model": False, "bundle": False, "extensions": 0,
            "min_bandwidth_fraction": 0.6, "min_matmul_fraction": 0.5, "judge_shared_gpu": False, "memory_fraction": None,
            "min_host_link_fraction": 0.5, "sustained_s": None, "min_sustained_fraction": 0.85, "memory_integrity": False,
            "range_axis": "batch", "range_budget_s": 20.0, "range_memory_fraction": 0.9,
            "device_list": None, "rendezvous": False, "world_size": None, "rank": None, "min_bus_bandwidth": 0.0,
            "full": False, "input": False, "verbose": False, "quiet": False, "color": "auto", "gtest_flags": []})
        self.assertEqual(rep["execution"], {"device": "cpu", "product_verified": True,
                                            "gradient_verified": True, "loss": 196.0, "arch_supported": None})
        pt = rep["pytorch"]
        self.assertTrue(pt["loaded"])
        self.assertRegex(pt["version"], r"^\d+\.\d+")
        self.assertIn(pt["backend"], ("cuda", "rocm", "none"))
        # CPU mode never queries GPU state: null, not 0 and not false.
        self.assertIsNone(pt["gpu_available"])
        self.assertIsNone(pt["visible_device_count"])
        self.assertIsNone(rep["device"])
        for key in ("os_family", "arch", "libc", "compiler", "suite_version"):
            self.assertTrue(rep["runtime"][key], key)
        self.assertEqual(rep["runtime"]["os_family"], "linux")
        layers = {l["id"]: l for l in rep["layers"]}
        self.assertEqual(list(layers), ["L1", "L2", "L3", "L4", "L5", "L6", "L7", "L8"])
        for off in ("L4", "L5", "L6", "L7", "L8"):  # off in a plain run
            self.assertEqual(layers[off]["status"], "not_run", off)
        self.assertIsNone(rep["peer"])
        self.assertIsNone(rep["collective"])
        self.assertIsNone(rep["app"])
        self.assertIsNone(rep["timing"])
        self.assertIsNone(rep["memory"])
        self.assertEqual(layers["L1"]["status"], "passed")
        self.assertEqual([t["name"] for t in layers["L3"]["tests"]],
                         ["Inputs", "Product", "Loss", "Gradients", "Synchronize"])
        statuses = {t["name"]: t["status"] for t in layers["L2"]["tests"]}
        self.assertEqual(statuses["GpuAvailable"], "skipped")  # visible as a skip, never as a pass
        self.assertIn("(1/5 passed)", r.layer_line("L2"))  # the terminal counts the skips too
        self.assertIn("product and gradient verified on cpu, loss 196", r.stdout)

    def test_cpu_in_process_debug_mode(self):
        r = self.run_kd("--device", "cpu", "--in-process")
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        self.assertTrue(r.report["requested"]["in_process"])

    def test_l3_alone_on_cpu_still_checks_everything_it_needs(self):
        r = self.run_kd("--device", "cpu", "--gtest_filter=L3_TinyOp.*")
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        layers = {l["id"]: l["status"] for l in r.report["layers"]}
        self.assertEqual(layers, {"L1": "not_run", "L2": "not_run", "L3": "passed", "L4": "not_run", "L5": "not_run",
                                  "L6": "not_run", "L7": "not_run", "L8": "not_run"})
        self.assertTrue(r.report["pytorch"]["loaded"])  # L1's import ran as a prerequisite

    def test_on_the_cpu_what_cannot_apply_says_so_and_nothing_is_blocked(self):
        r = self.run_kd("--device", "cpu", "--full", "--range-budget", "2")  # a short L5 sweep
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        layers = {l["id"]: l for l in r.report["layers"]}
        skipped = {f"{l['id']}.{t['name']}": t for l in r.report["layers"] for t in l["tests"] if t["status"] == "skipped"}
        # GPU state, a device synchronize, the caching allocator, the device ceilings, peer copies, a job's ranks.
        for name in ("L2.GpuAvailable", "L3.Synchronize", "L5.Steps", "L6.CopyBandwidth", "L7.Copy", "L8.Join"):
            self.assertIn(name, skipped)
        for name, t in skipped.items():  # nothing failed, so nothing is blocked
            self.assertEqual(t["skip_kind"], "not_applicable", name)
            self.assertNotIn("blocked_by", t, name)
        for lid in ("L7", "L8"):
            self.assertEqual((layers[lid]["status"], layers[lid]["skip_kind"]), ("skipped", "not_applicable"), lid)
            self.assertNotIn("blocked_by", layers[lid])
        for l in layers.values():
            if l["status"] != "skipped":
                self.assertNotIn("skip_kind", l, l["id"])
        self.assertRegex(r.layer_line("L7"), r"skipped +\(0/3 passed\) .*  not applicable: not supported on CPU$")
        self.assertRegex(r.layer_line("L8"), r"skipped +\(0/5 passed\) .*  not applicable: \S")

    def test_partial_filter_is_not_a_device_verdict(self):
        r = self.run_kd("--device", "cpu", "--layers", "L1")
        self.assertVerdict(r, "SELECTED_TESTS_PASSED", 0)
        self.assertFalse(r.report["execution"]["product_verified"])
        self.assertEqual(r.report["requested"]["layers"], ["L1"])


if __name__ == "__main__":
    unittest.main()
