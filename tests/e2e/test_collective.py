"""L8 collective with the real binary: ranks as separate processes on this machine over Gloo (--device cpu),
met through torchrun's variables. Two and four ranks pass; a rank started alone ends with 17 naming the rank
that never came, within its --timeout; a rank killed right after joining (test-only collective-rank-exit)
makes the others end with 17, not hang; a wrong contribution on one rank (collective-wrong) gives 8 on every
rank; the aggregate of the ranks' reports shows one row per rank and the job's verdict."""
import json
import os
import subprocess
import time

import unittest

from kd import BIN, BUILD, DiagnosticTest, needs_probe, rendezvous_port, validate


@needs_probe
@unittest.skipIf(BUILD.collective, "this LibTorch has the Gloo process group: class Collective runs instead")
class WithoutGloo(DiagnosticTest):
    def test_l8_says_this_libtorch_cannot_and_never_passes(self):
        # Debian's 1.13 does not export ProcessGroupGloo::Options::create_default.
        r = self.run_kd("--device", "cpu", "--layers", "L1,L8")
        self.assertVerdict(r, "SELECTED_TESTS_PASSED", 0)  # L1's pass; L8 checked nothing, and says why
        l8 = next(l for l in r.report["layers"] if l["id"] == "L8")
        self.assertEqual([t["status"] for t in l8["tests"]], ["skipped"] * 5)
        self.assertIn("without LibTorch's Gloo process group", l8["tests"][0]["message"])
        self.assertEqual(l8["status"], "skipped")
        # L8 alone: every selected test skipped is a usage error, never a pass.
        r = self.run_kd("--device", "cpu", "--layers", "L8", report=False)
        self.assertEqual(r.rc, 2, r.stdout + r.stderr)
        self.assertIn("every selected test was skipped", r.stdout + r.stderr)


@needs_probe
@unittest.skipUnless(BUILD.collective, "this LibTorch does not export its Gloo process group: WithoutGloo runs instead")
class Collective(DiagnosticTest):
    def ranks(self, world, *args, start=None, timeout="30"):
        """Starts the ranks of one job (START: which of them; default all), waits, returns (rc, report, stdout) each."""
        port = rendezvous_port()
        procs = []
        for rank in range(world) if start is None else start:
            path = os.path.join(self.dir, f"rank-{rank}.json")
            env = {**os.environ, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "WORLD_SIZE": str(world),
                   "RANK": str(rank), "LOCAL_RANK": str(rank)}
            argv = [BIN, "--device", "cpu", "--layers", "L8", "--timeout", timeout, "--output", path, *args]
            procs.append((rank, path, subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                                       text=True)))
        out = {}
        for rank, path, p in procs:
            stdout, stderr = p.communicate(timeout=float(timeout) + 30)
            report = None
            if os.path.exists(path):
                with open(path) as f:
                    report = json.load(f)
                validate(report)
            out[rank] = (p.returncode, report, stdout + stderr)
        return out

    def assertPassed(self, runs, world):
        for rank, (rc, report, text) in runs.items():
            self.assertEqual(rc, 0, text)
            c = report["collective"]
            self.assertEqual((c["source"], c["world_size"], c["rank"], c["backend"]), ("torchrun", world, rank, "gloo"))
            self.assertEqual(c["join"]["joined"], world)
            for step in ("all_reduce", "broadcast", "barrier"):
                self.assertEqual(c[step]["status"], "passed", step)
            sizes = c["bandwidth"]["sizes"]
            self.assertEqual([s["bytes"] for s in sizes], [64 << 10, 1 << 20, 16 << 20])
            for s in sizes:  # nccl-tests' bus bandwidth of an all-reduce
                self.assertAlmostEqual(s["busbw"], s["algbw"] * 2 * (world - 1) / world, delta=0.011)
                self.assertGreater(s["algbw"], 0)
            self.assertNotIn("127.0.0.1", json.dumps(report))  # never an address

    def test_two_ranks_pass_and_the_aggregate_has_a_row_per_rank(self):
        runs = self.ranks(2)
        self.assertPassed(runs, 2)
        agg = subprocess.run([BIN, "aggregate", os.path.join(self.dir, "rank-0.json"), os.path.join(self.dir, "rank-1.json")],
                             capture_output=True, text=True, timeout=60)
        self.assertEqual(agg.returncode, 0, agg.stdout + agg.stderr)
        self.assertIn("Job (L8 collective): 2 ranks of 2 reported; passed", agg.stdout)
        self.assertRegex(agg.stdout, r"rank 0 +passed +SELECTED_TESTS_PASSED")
        self.assertRegex(agg.stdout, r"rank 1 +passed +SELECTED_TESTS_PASSED")

    def test_four_ranks_pass(self):
        self.assertPassed(self.ranks(4), 4)

    def test_a_rank_alone_names_the_rank_that_never_came_within_its_timeout(self):
        start = time.monotonic()
        rc, report, text = self.ranks(2, start=[0], timeout="10")[0]
        self.assertLess(time.monotonic() - start, 10 + 5)  # the verdict inside --timeout (plus LibTorch's exit)
        self.assertEqual(rc, 17, text)
        self.assertEqual((report["code"], report["stage"]), ("COLLECTIVE_UNREACHABLE", "L8.join"))
        self.assertRegex(report["error"]["message"], r"^rank 1 did not join within \d+\.\d s$")
        self.assertEqual(report["collective"]["join"]["missing_ranks"], [1])
        self.assertIn("never started", report["error"]["cause"])
        # The aggregate of that job: rank 0's failure is the job's verdict, rank 1 sent no report.
        agg = subprocess.run([BIN, "aggregate", self.dir], capture_output=True, text=True, timeout=60)
        self.assertEqual(agg.returncode, 20, agg.stdout)
        self.assertIn("Job (L8 collective): 1 rank of 2 reported; no report from rank 1; failed: rank 0 "
                      "COLLECTIVE_UNREACHABLE", agg.stdout)

    def test_a_rank_without_rank_zero_says_the_rendezvous_did_not_answer(self):
        rc, report, text = self.ranks(2, start=[1], timeout="10")[1]
        self.assertEqual(rc, 17, text)
        self.assertIn("rank 0's rendezvous store did not answer", report["error"]["message"])
        self.assertIn("MASTER_ADDR and MASTER_PORT", report["error"]["next_action"])

    def test_a_rank_killed_after_joining_ends_the_others_with_17(self):
        runs = self.ranks(3, "--inject-fault", "collective-rank-exit", timeout="30")
        self.assertEqual(runs[2][0], 11, runs[2][2])  # the killed rank's own verdict: its worker died
        for rank in (0, 1):
            rc, report, text = runs[rank]
            self.assertEqual(rc, 17, text)
            self.assertEqual(report["stage"], "L8.all_reduce")
            self.assertIn("rank 2 never reached it", report["error"]["message"])
            self.assertNotIn("127.0.0.1", report["error"]["message"])

    def test_a_wrong_contribution_is_check_failed_on_every_rank(self):
        for rank, (rc, report, text) in self.ranks(2, "--inject-fault", "collective-wrong").items():
            self.assertEqual(rc, 8, text)
            self.assertEqual((report["code"], report["stage"]), ("CHECK_FAILED", "L8.all_reduce"))
            self.assertIn(f"element 7 holds 25 on rank {rank}, expected 24", report["error"]["message"])
            self.assertEqual(report["collective"]["all_reduce"]["status"], "wrong")

    def test_alone_and_without_a_job_it_is_a_group_of_one_or_not_applicable(self):
        r = self.run_kd("--device", "cpu", "--layers", "L8")
        self.assertVerdict(r, "SELECTED_TESTS_PASSED", 0)
        self.assertEqual((r.report["collective"]["source"], r.report["collective"]["world_size"]), ("single", 1))
        self.assertFalse(r.report["collective"]["bandwidth"]["floor_checked"])
        self.assertIn("one rank", r.report["collective"]["bandwidth"]["note"])
        # --full outside a job: L8 is a visible skip that says why, never a pass.
        # Every one of its steps: a skip of the join is a skip of what needs it (found on the H200: it was 9).
        r = self.run_kd("--device", "cpu", "--full", "--timeout", "120")
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        l8 = next(l for l in r.report["layers"] if l["id"] == "L8")
        self.assertEqual([t["status"] for t in l8["tests"]], ["skipped"] * 5)
        for t in l8["tests"]:
            self.assertIn("not one rank of a multi-rank job", t["message"])
        self.assertIsNone(r.report["collective"])  # nothing ran: no facts
        # A job of one rank under --full: the same, saying so.
        r = self.run_kd("--device", "cpu", "--full", "--timeout", "120",
                        env={**os.environ, "RANK": "0", "WORLD_SIZE": "1", "MASTER_ADDR": "127.0.0.1"})
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        l8 = next(l for l in r.report["layers"] if l["id"] == "L8")
        self.assertEqual([t["status"] for t in l8["tests"]], ["skipped"] * 5)
        self.assertIn("a job of one rank (torchrun)", l8["tests"][4]["message"])

    def test_a_bus_bandwidth_floor_no_link_reaches_is_16(self):
        for rank, (rc, report, text) in self.ranks(2, "--min-bus-bandwidth", "100000").items():
            self.assertEqual(rc, 16, text)
            self.assertEqual((report["code"], report["stage"]), ("PERFORMANCE_BELOW_FLOOR", "L8.bandwidth"))
            self.assertIn("below --min-bus-bandwidth 100000 GB/s", report["error"]["message"])
            bandwidth = report["collective"]["bandwidth"]
            self.assertTrue(bandwidth["floor_checked"])
            # Measured once more on every rank before it fails; both figures kept. The job's floor names no node.
            self.assertEqual((bandwidth["floor_source"], len(bandwidth["busbw_measurements"])), ("option", 2))
            self.assertIn("(measured twice: ", report["error"]["message"])
            self.assertEqual((report["error"]["signature"], report["error"]["action"]), ("collective-below-floor", "triage"))

    def test_a_first_measurement_below_the_floor_is_measured_again(self):
        # The CPU's loopback cannot be made slow once and fast next: the test-only fault makes the first figure read
        # 100 times slower, as a throttled link's would. A floor a tenth of this machine's figure: the second passes.
        free = self.ranks(2)
        self.assertPassed(free, 2)
        reached = min(r["collective"]["bandwidth"]["sizes"][-1]["busbw"] for _, r, _ in free.values())
        floor = f"{reached / 10:.6f}"
        for rank in (0, 1):
            os.remove(os.path.join(self.dir, f"rank-{rank}.json"))  # each run writes its ranks' reports anew
        runs = self.ranks(2, "--min-bus-bandwidth", floor, "--inject-fault", "slow-first-measurement")
        for rank, (rc, report, text) in runs.items():
            self.assertEqual(rc, 0, text)
            bandwidth = report["collective"]["bandwidth"]
            first, second = bandwidth["busbw_measurements"]
            self.assertLess(first, float(floor))
            self.assertGreaterEqual(second, float(floor))
            self.assertTrue(any("measured again" in w for w in report["warnings"]), report["warnings"])
        # Without a floor nothing is measured twice.
        for rank, (rc, report, text) in free.items():
            self.assertEqual(len(report["collective"]["bandwidth"]["busbw_measurements"]), 1)
            self.assertIsNone(report["collective"]["bandwidth"]["floor_source"])

    def test_a_broken_rendezvous_environment_names_the_variable(self):
        r = self.run_kd("--device", "cpu", "--layers", "L8",
                        env={**os.environ, "RANK": "0", "WORLD_SIZE": "2"})
        self.assertVerdict(r, "COLLECTIVE_UNREACHABLE", 17, "L8.join")
        self.assertIn("MASTER_ADDR is not", r.report["error"]["message"])
