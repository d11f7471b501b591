"""--metrics FILE (docs/fleets.md "Metrics"): the report as Prometheus metrics in the text exposition format, a new
file written whole (never overwritten), valid for promtool (Debian's prometheus package: scripts/setup installs it),
and parsed back here: its figures are the report's. Also the node-problem-detector wrapper (ci/kubernetes/)."""
import json
import os
import shutil
import subprocess
import unittest

from kd import BACKEND, BIN, DiagnosticTest, HAVE_PROBE, expected_default_code, read

ROOT = os.environ["KD_SOURCE_DIR"]
RECORDED = os.path.join(ROOT, "tests", "data", "kernel_log_xid.kmsg")
NPD = os.path.join(ROOT, "ci", "kubernetes", "node-problem-detector")
FAKE_CUDA = json.load(open(os.environ["KD_BUILD_INFO"]))["fake_cuda"]


def load_parser():
    """scripts/lib/prometheus-text: the reader the GPU verification uses too (no promtool there)."""
    import importlib.util
    from importlib.machinery import SourceFileLoader
    loader = SourceFileLoader("prometheus_text", os.path.join(ROOT, "scripts", "lib", "prometheus-text"))
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader("prometheus_text", loader))
    loader.exec_module(module)
    return module


parse = load_parser().parse


class Metrics(DiagnosticTest):
    def promtool(self, path):
        tool = shutil.which("promtool")
        if not tool:
            self.skipTest("promtool is not installed (Debian's prometheus package; scripts/setup installs it)")
        p = subprocess.run([tool, "check", "metrics"], stdin=open(path), capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(p.stdout + p.stderr, "", "promtool's linter found something")

    def test_a_run_as_metrics_that_promtool_accepts_and_that_read_back_as_the_report(self):
        path = os.path.join(self.dir, "kernodeck.prom")
        args = ["--device", "cpu", "--host-check", "--kernel-log-file", RECORDED, "--metrics", path]
        r = self.run_kd(*args)
        self.assertVerdict(r, *(("CPU_CHECK_PASSED", 0) if HAVE_PROBE else ("TORCH_MISSING", 3)))
        self.assertTrue(r.report["requested"]["metrics_file"])
        self.assertIn(f"Metrics: {path}\n", r.stdout)
        self.promtool(path)
        m = parse(read(path))
        self.assertTrue(all(name.startswith("kernodeck_") for name in m))
        [(verdict, one)] = m["kernodeck_verdict"]
        self.assertEqual((verdict["code"], verdict["status"], one), (r.report["code"], r.report["status"], 1))
        self.assertEqual(m["kernodeck_exit_code"], [({}, r.report["exit_code"])])
        self.assertEqual(m["kernodeck_passed"], [({}, 1.0 if r.report["status"] == "passed" else 0.0)])
        for layer in r.report["layers"]:
            mine = {s["status"]: v for s, v in m["kernodeck_layer_status"] if s["layer"] == layer["id"]}
            self.assertEqual(mine, {k: float(k == layer["status"]) for k in ("passed", "failed", "skipped", "not_run")})
        xid = {(s["kind"], s["pci_bus_id"], s["code"]): v for s, v in m["kernodeck_xid_lines"]}
        for e in r.report["host"]["kernel_log"]["events"]:
            self.assertEqual(xid[(e["kind"], e["pci_bus_id"], str(e["code"]))], e["count"])
        self.assertEqual(m["kernodeck_kernel_log_readable"], [({}, 1.0)])

    def test_a_failing_run_carries_its_action(self):
        code, exit_code = expected_default_code()
        if not exit_code:
            self.skipTest("this machine's GPU passes: the failing action is checked where the GPU cannot be used")
        path = os.path.join(self.dir, "failing.prom")
        r = self.run_kd("--metrics", path)
        self.assertVerdict(r, code, exit_code)
        self.promtool(path)
        [(verdict, _)] = parse(read(path))["kernodeck_verdict"]
        action = r.report["error"]["action"]
        self.assertEqual((verdict["code"], verdict["action"]), (code, action))
        node = action in ("reset_gpu", "drain_node", "replace_gpu")
        self.assertEqual(parse(read(path))["kernodeck_node_at_fault"], [({}, float(node))])

    def test_never_overwritten_and_never_left_behind(self):
        path = os.path.join(self.dir, "old.prom")
        with open(path, "w") as f:
            f.write("old\n")
        r = self.run_kd("--device", "cpu", "--metrics", path, report=False)
        self.assertEqual(r.rc, 12, r.stdout + r.stderr)
        self.assertIn("already exists", r.stderr)
        self.assertEqual(read(path), "old\n")
        # The same file for two outputs is a usage error; a report that cannot be saved takes the metrics with it.
        twice = self.run_kd("--device", "cpu", "--metrics", os.path.join(self.dir, "x"), "--output",
                            os.path.join(self.dir, "x"), report=False)
        self.assertEqual(twice.rc, 2, twice.stderr)
        self.assertIn("usage error", twice.stderr)
        new = os.path.join(self.dir, "new.prom")
        no_report = self.run_kd("--device", "cpu", "--metrics", new, "--output", os.path.join(self.dir, "no", "r.json"),
                                report=False)
        self.assertEqual(no_report.rc, 12, no_report.stdout + no_report.stderr)
        self.assertFalse(os.path.exists(new))
        self.assertEqual(self.run_kd("--device", "cpu", "--metrics", "-", report=False).rc, 2)

    def test_the_textfile_collector_recipe(self):
        # docs/fleets.md: a new name in the collector's folder that is not *.prom, then mv over the live file.
        collector = os.path.join(self.dir, "textfile")
        os.mkdir(collector)
        live = os.path.join(collector, "kernodeck.prom")
        for _ in range(2):
            p = subprocess.run(["sh", "-c", f'"{BIN}" --device cpu --quiet --metrics "{live}.new.$$"; '
                                            f'mv -f "{live}".new.* "{live}"'], capture_output=True, text=True, timeout=120)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(os.listdir(collector), ["kernodeck.prom"])
        self.promtool(live)


@unittest.skipUnless(HAVE_PROBE, "the wrapper's outcomes need a build that runs its checks")
class NodeProblemDetector(DiagnosticTest):
    """ci/kubernetes/node-problem-detector: NPD's custom plugin runs the wrapper; its exit is 0 OK, 1 NonOK, 2 Unknown."""

    def plugin(self, args="", env=None):
        wrapper = os.path.join(NPD, "kernodeck-npd-check")
        environment = dict(os.environ, KD_DIAGNOSTIC=BIN, KD_ARGS=args, **(env or {}))
        return subprocess.run([wrapper], capture_output=True, text=True, env=environment, timeout=120)

    def test_the_configuration_is_a_custom_plugin_monitor(self):
        config = json.loads(read(os.path.join(NPD, "kernodeck-monitor.json")))
        self.assertEqual(config["plugin"], "custom")
        self.assertEqual(config["pluginConfig"]["concurrency"], 1)
        [condition] = config["conditions"]
        self.assertEqual(condition["type"], "KernodeckGPUProblem")
        [rule] = [r for r in config["rules"] if r["type"] == "permanent"]
        self.assertEqual((rule["condition"], os.path.basename(rule["path"])), ("KernodeckGPUProblem", "kernodeck-npd-check"))
        # NPD's limits fit the check: its timeout above --timeout's, its output cut at max_output_length.
        self.assertGreater(int(rule["timeout"].rstrip("s")), 60)

    def test_exit_codes_map_to_ok_nonok_and_unknown(self):
        ok = self.plugin("--device cpu")
        self.assertEqual(ok.returncode, 0, ok.stdout + ok.stderr)
        self.assertTrue(ok.stdout.startswith("kernodeck: CPU_CHECK_PASSED"), ok.stdout)
        usage = self.plugin("--no-such-option")
        self.assertEqual(usage.returncode, 2, usage.stdout)  # the check did not run: Unknown, never NonOK
        injected = self.plugin("--device cpu --inject-fault wrong-product")
        self.assertEqual(injected.returncode, 2, injected.stdout)
        self.assertIn("test-only", injected.stdout)
        code, exit_code = expected_default_code()
        gpu = self.plugin("")
        if exit_code:  # a failure whose action is not the node's is Unknown here; a node's fault would be NonOK (1)
            self.assertEqual(gpu.returncode, 2, gpu.stdout)
            self.assertIn(code, gpu.stdout)
        else:
            self.assertEqual(gpu.returncode, 0, gpu.stdout)
        self.assertLessEqual(max(len(l) for l in (ok.stdout + gpu.stdout).splitlines()), 200)
        if BACKEND == "cuda":  # the CUDA driver says a driver service of the node is not running: drain_node, NonOK
            down = self.plugin("", env={"LD_LIBRARY_PATH": FAKE_CUDA, "KD_FAKE_CUDA_INIT": "802"})
            self.assertEqual(down.returncode, 1, down.stdout)
            self.assertTrue(down.stdout.startswith("kernodeck: GPU_UNAVAILABLE (exit 6) at stage L2.gpu_available, "
                                                   "action drain_node: "), down.stdout)


if __name__ == "__main__":
    unittest.main()
