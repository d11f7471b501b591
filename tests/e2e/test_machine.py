"""The machine around the GPU (docs/machine.md, docs/signatures.md), for real where this machine allows it: limits
through prlimit, the environment's variables, a small /dev/shm, a missing TMPDIR and /dev/nvidia* nodes in a private
mount namespace, a cgroup memory limit where the cgroup file system is writable. The CUDA driver's own states come from
a stand-in libcuda.so.1 (tests/fake_cuda) first on LD_LIBRARY_PATH, so that LibTorch's own CUDA runtime reports them in
its own words; NVML's facts (compute mode, MIG, the NVSwitch fabric) from the stand-in NVML (tests/fake_nvml)."""
import json
import os
import resource
import shutil
import subprocess
import time
import unittest

from kd import BACKEND, BIN, BUILD, HAVE_PROBE, DiagnosticTest, needs_probe
from sandbox import NOBODY, SETUP_FAILED, as_unprivileged, in_mount_namespace

INFO = json.load(open(os.environ["KD_BUILD_INFO"]))
FAKE_CUDA, FAKE_COMPAT, FAKE_NVML = INFO["fake_cuda"], INFO["fake_cuda_compat"], INFO["fake_nvml_full"]
CUDA_BUILD = HAVE_PROBE and BACKEND == "cuda"
UNEXPECTED = "Unexpected error from cudaGetDeviceCount()"

# The variables of the machine these tests run on that would change what they show.
CLEAN = {k: v for k, v in os.environ.items()
         if not k.startswith(("CUDA_", "PYTORCH_", "NCCL_", "KD_FAKE_")) and k not in ("LD_LIBRARY_PATH", "TMPDIR")}


def env(**extra):
    return dict(CLEAN, **{k: str(v) for k, v in extra.items()})


def fake_dev(folder, nodes, mode="600"):
    """Setup lines for in_mount_namespace: a private /dev (a tmpfs) with the system's null, zero, urandom, ... bound in,
    its own /dev/shm, and NODES (/dev/nvidia* names) as files of MODE, owned by root: a machine's NVIDIA device nodes as
    the diagnostic reads them (names and access), which the stand-in libcuda opens as the driver would."""
    old = os.path.join(folder, "real-dev")
    os.makedirs(old, exist_ok=True)
    lines = [f"mount --rbind /dev '{old}'", "mount -t tmpfs -o mode=755 kd-dev /dev"]
    for n in ("null", "zero", "full", "random", "urandom", "tty"):
        lines.append(f"{{ [ ! -e '{old}/{n}' ] || {{ touch /dev/{n} && mount --bind '{old}/{n}' /dev/{n}; }}; }}")
    lines += ["mkdir /dev/shm", "mount -t tmpfs kd-shm /dev/shm", "ln -s /proc/self/fd /dev/fd"]
    for node in nodes:
        lines += [f"touch /dev/{node}", f"chmod {mode} /dev/{node}"]
    return " && ".join(lines)


ALL_NODES = ("nvidiactl", "nvidia0", "nvidia-uvm", "nvidia-uvm-tools")


def root_namespace(setup):
    """in_mount_namespace's prefix in root's own mount namespace: a user namespace maps no other user (nobody)."""
    return ["unshare", "--mount", "sh", "-c", f'{setup} || exit {SETUP_FAILED}\n"$@"', "sh"]


class HostFacts(DiagnosticTest):
    """Always in the report, read without another process: limits, container, /dev/shm, temp, NVIDIA side, variables."""

    def test_the_facts_agree_with_the_system(self):
        r = self.run_kd("--device", "cpu")
        host = r.report["host"]
        for key, res in (("open_files", resource.RLIMIT_NOFILE), ("address_space_bytes", resource.RLIMIT_AS),
                         ("locked_memory_bytes", resource.RLIMIT_MEMLOCK), ("processes", resource.RLIMIT_NPROC),
                         ("stack_bytes", resource.RLIMIT_STACK)):
            soft, hard = resource.getrlimit(res)
            as_report = lambda v: None if v == resource.RLIM_INFINITY else v
            self.assertEqual(host["limits"][key], {"soft": as_report(soft), "hard": as_report(hard)}, key)
        shm = os.statvfs("/dev/shm")
        self.assertEqual(host["shm"]["size_bytes"], shm.f_blocks * shm.f_frsize)
        self.assertEqual(host["container"]["cpus"], len(os.sched_getaffinity(0)))
        self.assertEqual(host["nvidia"]["kernel_driver_version"] is None, not os.path.exists("/proc/driver/nvidia/version"))
        nodes = sorted(n for n in os.listdir("/dev") if n.startswith("nvidia") and not os.path.isdir("/dev/" + n))
        self.assertEqual([n["name"] for n in host["nvidia"]["device_nodes"]], nodes)
        self.assertNotIn("tool", host)  # nvidia-smi's part only with --host-check
        self.assertNotIn("Host limits", r.stdout)  # the lines too

    def test_limits_through_prlimit_and_their_warnings(self):
        r = self.run_kd("--device", "cpu", prefix=["prlimit", "--nofile=200:300", "--memlock=65536:65536"])
        self.assertEqual(r.report["host"]["limits"]["open_files"], {"soft": 200, "hard": 300})
        self.assertEqual(r.report["host"]["limits"]["locked_memory_bytes"], {"soft": 65536, "hard": 65536})
        self.assertIn("the open-files limit (ulimit -n) is 200: CUDA, NCCL and DataLoader workers need more descriptors; "
                      "raise it (ulimit -n 4096)", r.report["warnings"])
        self.assertIn("warning: the open-files limit (ulimit -n) is 200", r.stdout)

    def test_variables_by_name_and_validity_never_their_values(self):
        r = self.run_kd("--device", "cpu", env=env(CUDA_VISIBLE_DEVICES="0,0", PYTORCH_CUDA_ALLOC_CONF="max_split_size_mb:lots",
                                                   CUDA_LAUNCH_BLOCKING="1", CUDA_DEVICE_ORDER="PCI_BUS_ID"))
        by_name = {e["name"]: e for e in r.report["host"]["environment"]}
        self.assertEqual(by_name["CUDA_VISIBLE_DEVICES"],
                         {"name": "CUDA_VISIBLE_DEVICES", "valid": False, "value": None,
                          "note": "names one device twice (CUDA then shows none)"})
        self.assertEqual(by_name["PYTORCH_CUDA_ALLOC_CONF"]["valid"], False)
        self.assertEqual(by_name["CUDA_LAUNCH_BLOCKING"]["value"], "1")
        self.assertEqual(by_name["CUDA_DEVICE_ORDER"]["value"], "PCI_BUS_ID")
        text = json.dumps(r.report)
        self.assertNotIn("lots", text)
        self.assertNotIn('"0,0"', text)
        self.assertIn("CUDA_VISIBLE_DEVICES: names one device twice (CUDA then shows none)", r.report["warnings"])
        self.assertFalse(any("CUDA_LAUNCH_BLOCKING" in w for w in r.report["warnings"]), "a CPU run is not warned of it")
        g = self.run_kd("--device", "cuda", env=env(CUDA_LAUNCH_BLOCKING="1"))
        self.assertTrue(any(w.startswith("CUDA_LAUNCH_BLOCKING=1 is set") for w in g.report["warnings"]), g.report["warnings"])

    def test_host_check_shows_the_machine(self):
        r = self.run_kd("--device", "cpu", "--host-check", env=env(PATH="/nonexistent", CUDA_DEVICE_ORDER="PCI_BUS_ID"))
        lines = {l.split(":")[0]: l for l in r.stdout.splitlines() if l.startswith("Host ")}
        self.assertTrue(lines["Host limits (soft/hard)"].startswith("Host limits (soft/hard): open files "), r.stdout)
        self.assertIn("Host container", lines)
        self.assertIn("Host /dev/shm", lines)
        self.assertIn("Host NVIDIA", lines)
        self.assertEqual(lines["Host environment"], "Host environment: CUDA_DEVICE_ORDER=PCI_BUS_ID")

    def test_a_small_dev_shm_is_warned_of(self):
        prefix = in_mount_namespace(self, "mount -t tmpfs -o size=16m kd-shm /dev/shm")
        r = self.run_kd("--device", "cpu", prefix=prefix)
        self.assertNotEqual(r.rc, SETUP_FAILED, r.stderr)
        self.assertEqual(r.report["host"]["shm"]["size_bytes"], 16 << 20)
        self.assertTrue(any(w.startswith("the shared-memory folder (dev/shm) is 16 MiB: DataLoader workers and NCCL's")
                            for w in r.report["warnings"]), r.report["warnings"])


@needs_probe
class ScratchFolder(DiagnosticTest):
    """A missing or unwritable TMPDIR is passed over, as mktemp and Python's tempfile do: 12 is for what was asked."""

    def test_a_missing_tmpdir_gives_the_true_verdict(self):
        for device in ("cpu", "cuda"):
            r = self.run_kd("--device", device, env=env(TMPDIR=os.path.join(self.dir, "cleaned-up")))
            expected = ("CPU_CHECK_PASSED", 0) if device == "cpu" else (None, None)
            if expected[0]:
                self.assertVerdict(r, *expected)
            self.assertNotEqual(r.rc, 12, r.stdout + r.stderr)
            self.assertEqual(r.report["host"]["temp"], {"folder": "tmp", "skipped": ["TMPDIR"]})
            self.assertIn("TMPDIR names a folder where nothing can be created (missing, or not writable): the run's "
                          "scratch folder went to the next usable one (host.temp.folder: tmp); other programs that rely "
                          "on TMPDIR would fail here",
                          r.report["warnings"])
            self.assertNotIn(self.dir, json.dumps(r.report))

    def test_an_unwritable_tmpdir_as_an_unprivileged_user(self):
        locked = os.path.join(self.dir, "locked")
        os.mkdir(locked, 0o555)
        prefix = as_unprivileged(self)
        os.chmod(self.dir, 0o777)  # the report's folder, for nobody
        r = self.run_kd("--device", "cpu", env=env(TMPDIR=locked), prefix=prefix)
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        self.assertEqual(r.report["host"]["temp"]["skipped"], ["TMPDIR"])
        self.assertEqual(os.listdir(locked), [])

    def test_nowhere_to_write_at_all_is_no_output_failure(self):
        if os.geteuid() != 0:
            self.skipTest("needs root: read-only /tmp and /var/tmp for an unprivileged run")
        if os.path.realpath(BIN).startswith(("/tmp/", "/var/tmp/")):  # a checkout there, hidden by the mounts below
            self.skipTest("the build is under /tmp or /var/tmp, which this test covers with empty mounts")
        locked = os.path.join(self.dir, "locked")
        os.mkdir(locked, 0o555)
        os.chmod(self.dir, 0o755)
        prefix = root_namespace("mount -t tmpfs -o mode=555 kd-ro /tmp && mount -t tmpfs -o mode=555 kd-ro /var/tmp")
        r = self.run_kd("--device", "cpu", report=False, env=env(TMPDIR=locked), cwd=locked,
                        prefix=prefix + as_unprivileged(self))
        self.assertEqual(r.rc, 11, r.stdout + r.stderr)
        self.assertIn("WORKER_FAILED (exit 11): the run's scratch folder: no folder can be created in TMPDIR, TEMP, TMP, "
                      "/tmp, /var/tmp, /usr/tmp or the current folder", r.stderr)


@unittest.skipUnless(CUDA_BUILD, "the stand-in libcuda is loaded by a CUDA build of LibTorch only")
class DriverStates(DiagnosticTest):
    """The CUDA driver's own answers through LibTorch's runtime: each the code, the signature, a message left readable."""

    def gpu_run(self, nodes=ALL_NODES, mode="666", prefix_after=(), lib=FAKE_CUDA, nvml=False, as_root=False, **variables):
        """A plain GPU run in a private /dev holding NODES, the stand-in libcuda first on LD_LIBRARY_PATH. as_root: a
        mount namespace of root's own (a user namespace maps no other user, e.g. nobody)."""
        path = lib + (os.pathsep + FAKE_NVML if nvml else "")
        setup = fake_dev(self.dir, nodes, mode)
        prefix = root_namespace(setup) if as_root else in_mount_namespace(self, setup)
        r = self.run_kd(env=env(LD_LIBRARY_PATH=path, **variables), prefix=[*prefix, *prefix_after])
        self.assertNotEqual(r.rc, SETUP_FAILED, r.stderr)
        return r

    def assertState(self, r, words, signature, action=None):
        self.assertVerdict(r, "GPU_UNAVAILABLE", 6, "L2.gpu_available")
        error = r.report["error"]
        # The machine-readable action (docs/fleets.md "Actions"): the signature's, else the code's (triage).
        self.assertEqual(error["action"], action or ("triage" if signature is None else error["action"]), error)
        self.assertIn(f"\n  action: {error['action']}\n", r.stdout)
        self.assertIn(words, error["message"])
        self.assertNotIn("<path>", error["message"])
        self.assertEqual(error["signature"], signature, error)
        if signature:
            self.assertIn(f"  cause: {error['cause']} [{signature}]", r.stdout)
            self.assertEqual(r.report["next_action"], error["next_action"])
        else:
            self.assertIsNone(error["cause"])
        self.assertTrue(r.report["host"]["nvidia"]["libcuda"]["loaded"])

    def test_no_device_with_its_nodes_there_names_no_cause(self):
        r = self.gpu_run(KD_FAKE_CUDA_INIT=100)
        self.assertState(r, "No CUDA GPUs are available", None)
        self.assertEqual(r.report["host"]["nvidia"]["libcuda"]["source"], "library_path")

    def test_no_device_on_this_machine_as_it_is(self):
        r = self.run_kd(env=env(LD_LIBRARY_PATH=FAKE_CUDA, KD_FAKE_CUDA_INIT=100))
        host = r.report["host"]
        bare = host["container"]["detected"] and not host["nvidia"]["device_nodes"]
        self.assertState(r, "No CUDA GPUs are available", "container-without-gpus" if bare else None)

    def test_insufficient_driver(self):
        self.assertState(self.gpu_run(KD_FAKE_CUDA_INIT=0, KD_FAKE_CUDA_VERSION=12000),
                         "The NVIDIA driver on your system is too old (found version 12000)", "driver-too-old")

    def test_system_not_ready_and_the_fabric_manager(self):
        self.assertState(self.gpu_run(KD_FAKE_CUDA_INIT=802), "Error 802: system not yet initialized", "system-not-ready",
                         "drain_node")
        r = self.gpu_run(KD_FAKE_CUDA_INIT=802, nvml=True, KD_FAKE_NVML_FABRIC="not_started")
        self.assertState(r, "Error 802: system not yet initialized", "fabric-manager-not-running", "drain_node")
        self.assertEqual({g["fabric_state"] for g in r.report["host"]["nvml"]["gpus"]}, {"not_started"})

    def test_compatibility_mismatch_readable_and_its_compat_library(self):
        words = "Error 803: system has unsupported display driver / cuda driver combination"
        self.assertState(self.gpu_run(KD_FAKE_CUDA_INIT=803), words, "driver-library-mismatch")
        r = self.gpu_run(KD_FAKE_CUDA_INIT=803, lib=FAKE_COMPAT)
        self.assertState(r, words, "compat-library-mismatch")
        self.assertEqual(r.report["host"]["nvidia"]["libcuda"]["source"], "compat")
        self.assertTrue(r.report["host"]["nvidia"]["compat_libcuda_on_path"])

    def test_unknown_error_without_nvidia_uvm(self):
        r = self.gpu_run(nodes=("nvidiactl", "nvidia0"), KD_FAKE_CUDA_INIT=999)
        # nvidia-uvm is missing from this host's modules (a container shares them): the node's, whatever the container.
        self.assertState(r, "CUDA unknown error", "uvm-missing",
                         "drain_node" if r.report["host"]["nvidia"]["uvm_loaded"] is False else None)

    def test_device_unavailable_is_named_only_by_facts_that_agree(self):
        busy = "Error 46: CUDA-capable device(s) is/are busy or unavailable"
        self.assertState(self.gpu_run(KD_FAKE_CUDA_INIT=46, nvml=True), busy, None)  # default mode, ordinary limits
        self.assertState(self.gpu_run(KD_FAKE_CUDA_INIT=46, nvml=True, KD_FAKE_NVML_COMPUTE_MODE=3), busy,
                         "exclusive-process-busy")
        self.assertState(self.gpu_run(KD_FAKE_CUDA_INIT=46, nvml=True, KD_FAKE_NVML_COMPUTE_MODE=2), busy,
                         "compute-prohibited")

    def test_a_low_open_files_limit(self):
        # The stand-in holds 64 descriptors, as the driver opens its nodes and context; under ulimit -n 64 it cannot.
        r = self.gpu_run(prefix_after=["prlimit", "--nofile=64"], KD_FAKE_CUDA_FDS=64, KD_FAKE_CUDA_INIT=100, nvml=True)
        self.assertState(r, "Error 46: CUDA-capable device(s) is/are busy or unavailable", "open-files-limit")
        self.assertIn("open-files limit (ulimit -n) is 64", r.report["error"]["cause"])
        self.assertEqual(r.report["host"]["nvml"]["gpus"][0]["compute_mode"], "default")

    def test_an_address_space_limit(self):
        r = self.gpu_run(prefix_after=["prlimit", f"--as={8 << 30}"], KD_FAKE_CUDA_RESERVE_GIB=256)
        self.assertState(r, "Error 2: out of memory", "address-space-limit")
        self.assertTrue(any(w.startswith("an address-space limit (ulimit -v) of 8192 MiB") for w in r.report["warnings"]))

    def test_not_permitted(self):
        self.assertState(self.gpu_run(KD_FAKE_CUDA_INIT=800), "Error 800: operation not permitted", "not-permitted")

    def test_a_device_node_without_permission(self):
        if os.geteuid() != 0:
            self.skipTest("needs root: nodes owned by root, the run as nobody")
        prefix_after = as_unprivileged(self)
        os.chmod(self.dir, 0o777)  # the report's folder, for nobody
        r = self.gpu_run(mode="600", prefix_after=prefix_after, as_root=True, KD_FAKE_CUDA_NODE="/dev/nvidiactl")
        self.assertState(r, "No CUDA GPUs are available", "device-nodes-inaccessible")
        self.assertEqual({n["accessible"] for n in r.report["host"]["nvidia"]["device_nodes"]}, {False})
        self.assertIn("this user may not open 4 of the 4 NVIDIA device nodes", r.report["error"]["cause"])

    def test_visible_devices_named_twice_or_empty(self):
        r = self.gpu_run(KD_FAKE_CUDA_INIT=100, CUDA_VISIBLE_DEVICES="0,0")
        self.assertState(r, "No CUDA GPUs are available", "visible-devices-duplicate")
        self.assertNotIn('"0,0"', json.dumps(r.report))
        self.assertState(self.gpu_run(KD_FAKE_CUDA_INIT=100, CUDA_VISIBLE_DEVICES=""), "No CUDA GPUs are available",
                         "visible-devices-empty")

    def test_mig_without_an_instance(self):
        self.assertState(self.gpu_run(KD_FAKE_CUDA_INIT=100, nvml=True, KD_FAKE_NVML_MIG=1), "No CUDA GPUs are available",
                         "mig-without-instance")


@needs_probe
class CgroupLimit(DiagnosticTest):
    """A cgroup memory limit, where this machine lets a test make one (a writable v1 memory hierarchy)."""

    def test_the_limit_and_its_warning(self):
        base = "/sys/fs/cgroup/memory"
        if not os.access(base, os.W_OK) or not os.path.exists(os.path.join(base, "cgroup.procs")):
            self.skipTest("no writable cgroup v1 memory hierarchy here")
        group = os.path.join(base, f"kd-test-{os.getpid()}-{time.monotonic_ns()}")
        os.mkdir(group)

        def remove():  # once the run's last process is gone (a worker may still be ending)
            deadline = time.monotonic() + 10
            while True:
                try:
                    return os.rmdir(group)
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.1)

        self.addCleanup(remove)
        limit = 1536 << 20
        with open(os.path.join(group, "memory.limit_in_bytes"), "w") as f:
            f.write(str(limit))

        def join():
            with open(os.path.join(group, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))

        r = self.run_kd("--device", "cpu", preexec_fn=join)
        self.assertVerdict(r, "CPU_CHECK_PASSED", 0)
        c = r.report["host"]["container"]
        self.assertEqual(c["cgroup_version"], "v1")
        self.assertEqual(c["memory_limit_bytes"], limit)
        self.assertLess(c["memory_used_bytes"], limit)
        self.assertTrue(any(w.startswith("the cgroup's memory limit (1536 MiB) leaves") for w in r.report["warnings"]),
                        r.report["warnings"])


if __name__ == "__main__":
    unittest.main()
