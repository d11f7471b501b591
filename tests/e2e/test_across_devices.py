"""L4 across devices (--device-index all with L4): the embeddings workload split by input id over the GPUs, one
process each, gathered and compared with the single-GPU result, with the real binary. Without two GPUs the
split and gather run over three CPU processes behind the test-only faults cpu-shards and cpu-shard-oom (an
uneven split: 8 ids over 3); with one GPU the step says it needs two; with two or more (scripts/gpu-verify)
the GPUs themselves."""
import json
import os
import unittest

from kd import DiagnosticTest, gpu_count, needs_probe


DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data")
MODEL, SPEC = os.path.join(DATA, "tiny_model.pt"), os.path.join(DATA, "tiny_spec.json")  # x [4, 8] -> [4, 3], [4]


def step(report, name):
    l4 = next(l for l in report["layers"] if l["id"] == "L4")
    return next(t for t in l4["tests"] if t["name"] == name)


def across_step(report):
    l4 = next(l for l in report["layers"] if l["id"] == "L4")
    return next(t for t in l4["tests"] if t["name"] == "AcrossDevices")


@needs_probe
class AcrossCpuShards(DiagnosticTest):
    def test_on_the_cpu_the_split_is_not_applicable(self):
        r = self.run_kd("--device", "cpu", "--layers", "app")
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        self.assertEqual(across_step(r.report)["status"], "skipped")
        self.assertIn("on the CPU", across_step(r.report)["message"])
        self.assertNotIn("across_devices", r.report["app"])

    def test_three_shards_split_unevenly_and_gather_the_single_device_result(self):
        # Room for three more LibTorch loads at once on a small (or sanitized) CI machine.
        r = self.run_kd("--device", "cpu", "--layers", "app", "--inject-fault", "cpu-shards", "--timeout", "120")
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        self.assertEqual(across_step(r.report)["status"], "passed")
        a = r.report["app"]["across_devices"]
        self.assertEqual(a["unit"], "CPU shard")
        self.assertEqual(a["devices"], 3)
        self.assertEqual([s["ids"] for s in a["split"]], [3, 3, 2])  # 8 ids over 3: the first ones one longer
        self.assertEqual((a["ids"], a["gathered"], a["contract"]), (8, 8, "passed"))
        self.assertEqual(r.report["requested"]["fault_injection"], "cpu-shards")

    def test_a_shard_that_runs_out_of_memory_is_named(self):
        r = self.run_kd("--device", "cpu", "--layers", "app", "--inject-fault", "cpu-shard-oom", "--timeout", "120")
        self.assertVerdict(r, "OUT_OF_MEMORY", 9, "L4.across_devices")
        self.assertIn("the shard on CPU shard 1 failed", r.report["error"]["message"])
        self.assertIn("could not hold its shard", r.report["error"]["cause"])
        self.assertIn("--device-index N", r.report["error"]["next_action"])
        self.assertEqual(r.report["app"]["across_devices"]["contract"], "shard_failed")
        self.assertEqual(r.report["app"]["across_devices"]["gathered"], 0)

    def test_the_users_model_splits_by_rows_and_gathers_the_whole_runs_outputs(self):
        r = self.run_kd("--device", "cpu", "--model", MODEL, "--input", SPEC, "--inject-fault", "cpu-shards",
                        "--timeout", "120")
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        self.assertEqual(step(r.report, "AcrossDevicesModel")["status"], "passed")
        m = r.report["app"]["across_devices_model"]
        self.assertEqual([s["ids"] for s in m["split"]], [2, 1, 1])  # 4 rows over 3 shards
        self.assertEqual((m["ids"], m["gathered"], m["contract"], m["unit"]), (4, 4, "passed", "CPU shard"))

    def test_a_model_shard_that_runs_out_of_memory_is_named(self):
        r = self.run_kd("--device", "cpu", "--model", MODEL, "--input", SPEC, "--inject-fault", "cpu-shard-oom",
                        "--timeout", "120")
        self.assertVerdict(r, "OUT_OF_MEMORY", 9, "L4.across_devices")  # the embeddings' split comes first
        self.assertEqual(step(r.report, "AcrossDevicesModel")["status"], "failed")
        self.assertEqual(r.report["app"]["across_devices_model"]["contract"], "shard_failed")

    def test_a_model_without_a_batch_to_split_says_why(self):
        spec = os.path.join(self.dir, "one_row.json")
        with open(spec, "w") as f:
            json.dump({"inputs": [{"name": "x", "shape": [1, 8], "range": [0.5, 2.0]}], "outputs": {"count": 2}}, f)
        r = self.run_kd("--device", "cpu", "--model", MODEL, "--input", spec, "--inject-fault", "cpu-shards",
                        "--timeout", "120")
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        t = step(r.report, "AcrossDevicesModel")
        self.assertEqual(t["status"], "skipped")
        self.assertIn("a batch of 1 row: nothing to split", t["message"])
        # Without --model the step says so, and on the CPU without the test-only shards it does not apply.
        r = self.run_kd("--device", "cpu", "--layers", "app")
        self.assertIn("no --model given", step(r.report, "AcrossDevicesModel")["message"])

    def test_the_faults_refuse_a_run_they_cannot_act_in(self):
        for args in (["--layers", "app", "--inject-fault", "cpu-shards"],  # not --device cpu
                     ["--device", "cpu", "--layers", "L3", "--inject-fault", "cpu-shard-oom"],  # no L4
                     ["--layers", "app", "--inject-fault", "shard-oom"]):  # not --device-index all
            r = self.run_kd(*args, report=False)
            self.assertEqual(r.rc, 2, r.stderr)
            self.assertIn("--inject-fault", r.stderr)


@unittest.skipUnless(gpu_count() >= 1, "needs a GPU")
class AcrossGpus(DiagnosticTest):
    def test_one_visible_gpu_says_the_split_needs_two(self):
        r = self.run_kd("--device-index", "all", "--layers", "app", "--timeout", "60",
                        env={**os.environ, "CUDA_VISIBLE_DEVICES": "0"})
        self.assertVerdict(r, "GPU_CHECK_PASSED", 0)
        step = across_step(r.report)  # the merged report is GPU 0's, whose worker runs the split
        self.assertEqual(step["status"], "skipped")
        self.assertIn("needs two or more GPUs: 1 visible", step["message"])

    def test_a_single_gpu_run_points_to_device_index_all(self):
        r = self.run_kd("--layers", "app")
        self.assertVerdict(r, "GPU_CHECK_PASSED", 0)
        self.assertIn("--device-index all", across_step(r.report)["message"])

    @unittest.skipUnless(gpu_count() >= 2, f"needs 2 GPUs; {gpu_count()} visible")
    def test_every_gpu_gets_a_shard_and_the_gathered_result_is_the_single_gpu_one(self):
        n = gpu_count()
        r = self.run_kd("--device-index", "all", "--layers", "app", "--timeout", "120")
        self.assertVerdict(r, "GPU_CHECK_PASSED", 0)
        a = r.report["app"]["across_devices"]
        self.assertEqual((a["unit"], a["devices"], a["gathered"], a["contract"]), ("GPU", n, 8, "passed"))

    @unittest.skipUnless(gpu_count() >= 2, f"needs 2 GPUs; {gpu_count()} visible")
    def test_a_list_of_gpus_splits_the_model_over_them(self):
        r = self.run_kd("--device-index", "1,0", "--model", MODEL, "--input", SPEC, "--timeout", "120")
        self.assertVerdict(r, "GPU_CHECK_PASSED", 0)
        m = r.report["app"]["across_devices_model"]
        self.assertEqual([s["device"] for s in m["split"]], [1, 0])
        self.assertEqual((m["unit"], m["gathered"], m["contract"]), ("GPU", 4, "passed"))
        self.assertEqual(r.report["peer"]["devices"], [1, 0])

    @unittest.skipUnless(gpu_count() >= 2, f"needs 2 GPUs; {gpu_count()} visible")
    def test_a_gpu_that_runs_out_of_memory_on_its_shard_is_named(self):
        r = self.run_kd("--device-index", "all", "--layers", "app", "--inject-fault", "shard-oom", "--timeout", "120")
        self.assertVerdict(r, "OUT_OF_MEMORY", 9, "L4.across_devices")
        self.assertIn("the shard on GPU 1 failed", r.report["error"]["message"])


if __name__ == "__main__":
    unittest.main()
