"""Layer L4 (application) with the real binary on the CPU: the built-in workloads and their contracts."""
import unittest

from kd import DiagnosticTest, needs_probe


@needs_probe
class AppLayer(DiagnosticTest):
    def test_layers_app_runs_the_fixed_check_then_l4(self):
        r = self.run_kd("--device", "cpu", "--layers", "app")
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        layers = {l["id"]: l for l in r.report["layers"]}
        self.assertEqual({k: v["status"] for k, v in layers.items()},
                         {"L1": "passed", "L2": "passed", "L3": "passed", "L4": "passed"})
        self.assertEqual(r.report["requested"]["layers"], ["L1", "L2", "L3", "L4"])
        emb = r.report["app"]["embeddings"]
        self.assertEqual((emb["count"], emb["dim"], emb["contract"]), (8, 16, "passed"))
        self.assertTrue(emb["eval_mode"] and emb["inference_mode"])
        self.assertTrue(emb["cpu_reference"]["within"] and emb["batch_size_change"]["within"])
        self.assertEqual(emb["input"], "8 sequences, max length 64, int64 tokens, batch 4 (and 3), device cpu")
        tr = r.report["app"]["training"]
        self.assertEqual((tr["trainable_changed"], tr["trainable_total"]), (2, 2))
        self.assertEqual((tr["frozen_changed"], tr["frozen_total"]), (0, 1))
        self.assertTrue(tr["eval_without_dropout"] and tr["train_mode_restored"] and tr["state_identical"])
        self.assertGreater(tr["state_bytes"], 0)
        self.assertIn("[       OK ] L4_App.Embeddings", r.stdout)

    def test_l4_alone_runs_what_it_needs(self):
        r = self.run_kd("--device", "cpu", "--layers", "L4")
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        layers = {l["id"]: l["status"] for l in r.report["layers"]}
        self.assertEqual(layers, {"L1": "not_run", "L2": "not_run", "L3": "not_run", "L4": "passed"})
        self.assertTrue(r.report["execution"]["product_verified"])  # L3 ran as a prerequisite

    def test_full_runs_every_layer(self):
        r = self.run_kd("--device", "cpu", "--full")
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        self.assertTrue(all(l["status"] != "not_run" for l in r.report["layers"]))

    def test_a_failing_tiny_check_stops_l4(self):
        r = self.run_kd("--device", "cpu", "--layers", "app", "--inject-fault", "wrong-product")
        self.assertVerdict(r, "CHECK_FAILED", 8, "L3.product")
        self.assertIsNone(r.report["app"])


if __name__ == "__main__":
    unittest.main()
