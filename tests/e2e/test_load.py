"""L6 under load with the real binary on the CPU's stand-ins (docs/layers.md "L6 under load"): the host link's copies
(measured, not judged: the CPU has no link), the sustained load with its bitwise comparisons and its curve, and the
memory integrity pass; the test-only faults silent-corruption, memory-corrupt and throttle (the stand-in NVML's
throttling GPU 0) give their codes at their stages; the long checks stay off unless asked; bad bounds are exit 2."""
import json
import os
import unittest
import xml.etree.ElementTree as ET

from kd import DiagnosticTest, needs_probe

FAKE_NVML = json.load(open(os.environ["KD_BUILD_INFO"]))

SVG = "{http://www.w3.org/2000/svg}"


def throttling_nvml():
    return dict(os.environ, KD_FAKE_NVML_THROTTLE="1",
                LD_LIBRARY_PATH=FAKE_NVML["fake_nvml_full"] + os.pathsep + os.environ.get("LD_LIBRARY_PATH", ""))


def tests_of(report, layer="L6"):
    return {t["name"]: t for t in next(l for l in report["layers"] if l["id"] == layer)["tests"]}


@needs_probe
class LoadOnTheCpu(DiagnosticTest):
    def test_a_clean_run_passes_with_its_curve_and_every_product_equal(self):
        bundle = os.path.join(self.dir, "bundle")
        r = self.run_kd("--device", "cpu", "--layers", "L6", "--sustained", "2", "--memory-integrity", "--bundle", bundle)
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        tests = tests_of(r.report)
        for name in ("SustainedResults", "MemoryIntegrity"):
            self.assertEqual(tests[name]["status"], "passed", name)
        # The CPU is shared with whatever else this machine runs (a loaded CI machine's rate fell to 0.06 of its
        # first seconds): its rate is recorded, never judged, a visible skip.
        t = tests["SustainedThroughput"]
        self.assertEqual((t["status"], t["skip_kind"]), ("skipped", "not_applicable"))
        self.assertRegex(t["message"], r"^the CPU's sustained rate \(.* TFLOP/s, [0-9.]+ of the first seconds\) is "
                                       r"recorded, not judged: the host's cores are shared")
        self.assertEqual(tests["HostLink"]["status"], "skipped")
        self.assertIn("the CPU has no host link", tests["HostLink"]["message"])
        t = r.report["timing"]
        su, res, mi, hl = t["sustained"], t["sustained_results"], t["memory_integrity"], t["host_link"]
        self.assertEqual(su["seconds"], 2)
        self.assertGreater(su["products"], 10)
        self.assertGreaterEqual(len(su["curve"]), 4)
        self.assertGreaterEqual(su["curve"][-1]["t_s"], 2)
        self.assertEqual((su["nvml_samples"], su["hottest_c"], su["reasons"]), (0, None, []))  # no GPU watched
        self.assertEqual(res["compared"], su["products"])
        self.assertEqual((res["differing_products"], res["first_iteration"]), (0, None))
        self.assertEqual((res["reference_start_bad"], res["reference_end_bad"], res["reference_rows"]), (0, 0, 4))
        self.assertEqual((mi["bytes_tested"], mi["chunks"], mi["mismatches"], mi["first_bad"]), (64 << 20, 8, 0, None))
        self.assertEqual([p["name"] for p in mi["patterns"]], ["address-in-address", "walking ones", "seeded pseudo-random"])
        self.assertEqual([s["bytes"] for s in hl["sizes"]], [1 << 20, 16 << 20])
        self.assertGreater(hl["h2d_gb_s"], 0)
        self.assertIsNone(hl["expected_gb_s"])
        self.assertIn("sustained load: 2 s", r.stdout)
        self.assertIn("memory integrity: 0.07 GB (the CPU's stand-in)", r.stdout)
        # The curve in the bundle: valid SVG with the throughput's polyline over the load's seconds.
        root = ET.parse(os.path.join(bundle, "sustained_load.svg")).getroot()
        self.assertEqual(root.tag, SVG + "svg")
        lines = root.findall(f".//{SVG}polyline")
        self.assertGreaterEqual(len(lines), 1)
        self.assertGreaterEqual(len(lines[0].get("points").split()), 4)
        self.assertIn("Sustained load: 2 s", "".join(root.itertext()))

    def test_silent_corruption_is_8_at_its_own_stage_with_the_iteration(self):
        r = self.run_kd("--device", "cpu", "--layers", "L6", "--sustained", "2", "--inject-fault", "silent-corruption")
        self.assertVerdict(r, "CHECK_FAILED", 8, "L6.sustained_results")
        res = r.report["timing"]["sustained_results"]
        self.assertEqual((res["differing_products"], res["first_iteration"], res["first_elements"]), (1, 5, 1))
        self.assertGreater(res["first_max_diff"], 0)
        self.assertIn("silent data corruption: product 5 of", r.report["error"]["message"])
        self.assertIn("in 1 element(s)", r.report["error"]["message"])
        self.assertEqual(tests_of(r.report)["SustainedThroughput"]["status"], "skipped")  # the CPU's rate: not judged
        self.assertIn("[injected fault silent-corruption: test only, not a diagnosis]", r.stdout)

    def test_a_corrupted_chunk_is_8_with_its_offset(self):
        r = self.run_kd("--device", "cpu", "--layers", "L6", "--memory-integrity", "--inject-fault", "memory-corrupt")
        self.assertVerdict(r, "CHECK_FAILED", 8, "L6.memory_integrity")
        bad = r.report["timing"]["memory_integrity"]["first_bad"]
        # 8 chunks of 8 MiB: the fault flips one bit of a word a third into chunk 4.
        self.assertEqual((bad["chunk"], bad["offset_bytes"], bad["mismatches"], bad["pattern"]),
                         (4, 4 * (8 << 20), 1, "address-in-address"))
        self.assertEqual(bad["word_offset_bytes"], (8 << 20) // 8 // 3 * 8)
        self.assertIn(f"in chunk 4 at offset {4 * (8 << 20)}", r.report["error"]["message"])
        self.assertEqual(r.report["timing"]["memory_integrity"]["mismatches"], 1)

    def test_throttle_is_16_naming_nvmls_reasons(self):
        bundle = os.path.join(self.dir, "bundle")
        r = self.run_kd("--device", "cpu", "--layers", "L6", "--sustained", "3", "--inject-fault", "throttle",
                        "--bundle", bundle, env=throttling_nvml())
        self.assertVerdict(r, "PERFORMANCE_BELOW_FLOOR", 16, "L6.sustained_throughput")
        su = r.report["timing"]["sustained"]
        self.assertTrue(su["below_floor"])
        self.assertLess(su["fraction"], 0.85)
        self.assertEqual(su["reasons"], ["sw_power_cap", "sw_thermal_slowdown"])
        self.assertEqual((su["hottest_c"], su["lowest_sm_clock_mhz"], su["highest_power_w"]), (89, 1005, 698))
        self.assertGreaterEqual(su["nvml_samples"], 10)  # about every 100 ms for 3 s
        self.assertEqual(su["fault"], "throttle")
        self.assertIn("NVML's clock-event reasons: sw_power_cap, sw_thermal_slowdown", r.report["error"]["message"])
        self.assertIn("below the floor 0.85", r.report["error"]["message"])
        root = ET.parse(os.path.join(bundle, "sustained_load.svg")).getroot()
        self.assertEqual(len(root.findall(f".//{SVG}polyline")), 4)  # throughput, clock, temperature, power

    def test_the_long_checks_are_off_unless_asked(self):
        r = self.run_kd("--device", "cpu", "--layers", "L6")
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        tests = tests_of(r.report)
        for name in ("SustainedThroughput", "SustainedResults", "MemoryIntegrity"):
            self.assertEqual(tests[name]["status"], "skipped", name)
            self.assertIn("off: --", tests[name]["message"])
        self.assertNotIn("sustained", r.report["timing"])
        self.assertNotIn("memory_integrity", r.report["timing"])
        self.assertIsNone(r.report["requested"]["sustained_s"])
        self.assertFalse(r.report["requested"]["memory_integrity"])

    def test_several_host_links_are_measured_alone_and_at_once(self):
        # TEST ONLY: three CPU threads stand in for the GPUs GPU 0's worker of --device-index all measures together.
        r = self.run_kd("--device", "cpu", "--layers", "L6", "--inject-fault", "cpu-host-links")
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        self.assertEqual(tests_of(r.report)["HostLink"]["status"], "skipped")  # the CPU's copies: recorded, not judged
        t = r.report["timing"]["host_link"]["together"]
        self.assertEqual([g["gpu"] for g in t["gpus"]], [0, 1, 2])
        for g in t["gpus"]:
            for key in ("h2d_alone_gb_s", "d2h_alone_gb_s", "h2d_together_gb_s", "d2h_together_gb_s"):
                self.assertGreater(g[key], 0, key)
        self.assertAlmostEqual(t["h2d_total_gb_s"], sum(g["h2d_together_gb_s"] for g in t["gpus"]), places=2)
        self.assertAlmostEqual(t["d2h_total_gb_s"], sum(g["d2h_together_gb_s"] for g in t["gpus"]), places=2)
        self.assertIn("16777216 bytes", t["workload"])
        self.assertIn("3 devices at once, every repeat started together", t["workload"])
        self.assertRegex(r.stdout, r"host links of GPUs 0, 1, 2 at once: host to device [0-9.]+, [0-9.]+, [0-9.]+ GB/s "
                                   r"\(alone [0-9.]+, [0-9.]+, [0-9.]+\), [0-9.]+ in all; device to host")
        # One device (the CPU, or a GPU run other than GPU 0's of --device-index all): nothing at once.
        r = self.run_kd("--device", "cpu", "--layers", "L6")
        self.assertIsNone(r.report["timing"]["host_link"]["together"])
        self.assertNotIn("at once", r.stdout)

    def test_bounds_and_rules_are_usage_errors(self):
        for args, message in [
            (["--layers", "L6", "--sustained", "1"], "--sustained must be a number of seconds from 2 to 3600, not '1'"),
            (["--layers", "L6", "--sustained", "3601"], "--sustained must be a number of seconds from 2 to 3600"),
            (["--layers", "L6", "--min-sustained-fraction", "1.2"], "--min-sustained-fraction must be a fraction from 0 to 1"),
            (["--layers", "L6", "--min-host-link-fraction", "-1"], "--min-host-link-fraction must be a fraction from 0 to 1"),
            (["--layers", "L3", "--sustained", "5"], "--sustained runs in layer L6: add --layers L6"),
            (["--memory-integrity"], "--memory-integrity runs in layer L6"),
            (["--layers", "L6", "--inject-fault", "silent-corruption"], "--inject-fault silent-corruption acts in L6's sustained load"),
            (["--layers", "L6", "--inject-fault", "memory-corrupt"], "--inject-fault memory-corrupt acts in L6's memory integrity"),
        ]:
            r = self.run_kd("--device", "cpu", *args, report=False)
            self.assertEqual(r.rc, 2, args)
            self.assertIn(message, r.stdout + r.stderr)


@needs_probe
class LoadOnASharedGpu(DiagnosticTest):
    """The stand-in NVML's GPU 0 with two other processes computing (docs/shared-gpus.md): the load's floor is not
    applied, and the memory pass, which would take nearly all free memory, is not run beside them."""

    def test_a_throttled_load_beside_others_computing_is_a_visible_skip_never_16(self):
        env = dict(throttling_nvml(), KD_FAKE_NVML_OTHERS="2:10240", KD_FAKE_NVML_UTILIZATION="100")
        r = self.run_kd("--device", "cpu", "--layers", "L6", "--sustained", "3", "--inject-fault", "throttle", env=env)
        self.assertEqual((r.rc, r.report["code"]), (0, "CPU_CHECK_PASSED"), r.stdout[-3000:])
        t = tests_of(r.report)["SustainedThroughput"]
        self.assertEqual((t["status"], t["skip_kind"]), ("skipped", "not_applicable"))
        self.assertRegex(t["message"], r"^other processes used the GPU during the measurement: 2 other processes \(20\.00 "
                                       r"GiB\), up to [0-9]+ % of the SMs.*below the floor 0\.85 \(--min-sustained-fraction\)")
        self.assertTrue(r.report["timing"]["sustained"]["below_floor"])  # the figure is recorded all the same
        r = self.run_kd("--device", "cpu", "--layers", "L6", "--sustained", "3", "--inject-fault", "throttle",
                        "--judge-shared-gpu", env=env)
        self.assertVerdict(r, "PERFORMANCE_BELOW_FLOOR", 16, "L6.sustained_throughput")

    def test_the_host_link_is_watched_for_other_processes(self):
        # On a GPU beside others computing its floor is not applied (an H200 beside a computing job read 0.42 of the
        # link host to device); the CPU's copies are never judged: here the watch and its record are what shows.
        env = dict(throttling_nvml(), KD_FAKE_NVML_OTHERS="2:10240", KD_FAKE_NVML_UTILIZATION="100")
        del env["KD_FAKE_NVML_THROTTLE"]
        r = self.run_kd("--device", "cpu", "--layers", "L6", "--inject-fault", "stand-in-gpu",
                        "--min-bandwidth-fraction", "0", "--min-matmul-fraction", "0", env=env)
        self.assertEqual((r.rc, r.report["code"]), (0, "CPU_CHECK_PASSED"), r.stdout[-3000:])
        s = r.report["sharing"]["measurements"]["L6.host_link"]
        self.assertEqual((s["floor"], s["contended"], s["during"]["other_processes"]), ("none", True, 2))
        self.assertIn("the CPU has no host link", tests_of(r.report)["HostLink"]["message"])

    def test_the_memory_pass_is_not_run_beside_other_processes(self):
        env = dict(throttling_nvml(), KD_FAKE_NVML_OTHERS="1:10240")
        del env["KD_FAKE_NVML_THROTTLE"]
        r = self.run_kd("--device", "cpu", "--layers", "L6", "--memory-integrity", "--inject-fault", "stand-in-gpu",
                        "--min-bandwidth-fraction", "0", "--min-matmul-fraction", "0", env=env)
        self.assertEqual((r.rc, r.report["code"]), (0, "CPU_CHECK_PASSED"), r.stdout[-3000:])
        t = tests_of(r.report)["MemoryIntegrity"]
        self.assertEqual((t["status"], t["skip_kind"]), ("skipped", "not_applicable"))
        self.assertIn("1 other process (10.00 GiB) use this GPU: the pass would take the memory they may need",
                      t["message"])
        self.assertNotIn("memory_integrity", r.report["timing"])


if __name__ == "__main__":
    unittest.main()
