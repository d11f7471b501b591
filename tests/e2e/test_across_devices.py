"""L4 across devices (--device-index all with L4): the embeddings workload split by input id over the GPUs, one
process each, gathered and compared with the single-GPU result, with the real binary. Without two GPUs the
split and gather run over three CPU processes behind the test-only faults cpu-shards and cpu-shard-oom (an
uneven split: 8 ids over 3); with one GPU the step says it needs two; with two or more (scripts/gpu-verify)
the GPUs themselves."""
import os
import unittest

from kd import DiagnosticTest, gpu_count, needs_probe


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
    def test_a_gpu_that_runs_out_of_memory_on_its_shard_is_named(self):
        r = self.run_kd("--device-index", "all", "--layers", "app", "--inject-fault", "shard-oom", "--timeout", "120")
        self.assertVerdict(r, "OUT_OF_MEMORY", 9, "L4.across_devices")
        self.assertIn("the shard on GPU 1 failed", r.report["error"]["message"])


if __name__ == "__main__":
    unittest.main()
