"""Helpers for the end-to-end tests: run the real binary, read and validate its report."""
import functools
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import unittest

try:
    import jsonschema
except ImportError:  # only scripts/fault-matrix may go on without it (a GPU machine without a registry)
    jsonschema = None


class Build:
    """One build of the diagnostic, as CMake described it in kd-build.json (tests/CMakeLists.txt)."""

    def __init__(self, info_path):
        with open(info_path) as f:
            info = json.load(f)
        self.folder = os.path.dirname(os.path.abspath(info_path))
        self.bin = info["bin"]
        self.probe = os.path.join(os.path.dirname(self.bin), "libkd_probe.so")
        self.probe_heavy = os.path.join(os.path.dirname(self.bin), "libkd_probe_heavy.so")
        self.full_program = os.path.join(os.path.dirname(self.bin), "kernodeck-diagnostic-full")  # L4-L8, aggregate
        self.listener_cases = info["listener_cases"]
        self.fake_nvml_full = info["fake_nvml_full"]  # the folder of a stand-in libnvidia-ml.so.1 (tests/fake_nvml)
        self.undefined_symbol_probe = info["undefined_symbol_probe"]
        self.other_build_probe = info["other_build_probe"]  # a probe and heavy part of an earlier build of the suite
        self.schema = info["schema"]
        self.have_probe = info["have_probe"] == "ON"
        self.backend = info["backend"] or "absent"  # cuda, none or absent
        self.torch_version = info["torch_version"]
        self.aoti_loader = info["aoti_loader"] == "ON"  # the probe loads AOTInductor packages (.pt2)
        self.collective = info["collective"] == "ON"  # L8 runs: this LibTorch exports its Gloo process group
        self.sanitize = info["sanitize"] == "ON"
        self.torch_source = info["torch_source"]  # how scripts/setup chose it: private, debian, python, prefix
        self.torch_build_path = info["torch_build_path"]  # wheel (a CUDA pip torch's own files), find_package or none
        self.cuda_names = info["cuda_names"]  # the wheel's build: crt/ and nv/target the wheel's, or declared (probe/cuda_names)
        self.torch_unbuildable = info["torch_unbuildable"]  # why a LibTorch that was found has no probe

    @property
    def kind(self):
        """cuda (a GPU LibTorch), cpu-only (e.g. Debian's 1.13) or no-torch (built without LibTorch)."""
        if not self.have_probe:
            return "no-torch"
        return "cuda" if self.backend == "cuda" else "cpu-only"

    def describe(self):
        torch = f"LibTorch {self.torch_version}" if self.have_probe else "no LibTorch"
        return f"{self.kind}, {torch}{', ASan+UBSan' if self.sanitize else ''}"


BUILD = Build(os.environ["KD_BUILD_INFO"])
BIN = BUILD.bin
FULL = BUILD.full_program  # kernodeck-diagnostic-full: L4-L8, aggregate, and the jobs their steps start
SCHEMA = json.load(open(BUILD.schema))
HAVE_PROBE = BUILD.have_probe
BACKEND = BUILD.backend


@functools.lru_cache(maxsize=None)
def gpu_count():
    """An oracle independent of the tool: the GPUs nvidia-smi lists (or 1 for a bare device node)."""
    smi = shutil.which("nvidia-smi")
    if smi:
        out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=10)
        if out.returncode == 0:
            return len([l for l in out.stdout.splitlines() if l.startswith("GPU ")])
    return 1 if os.path.exists("/dev/nvidia0") else 0


def machine_has_gpu():
    return gpu_count() > 0


def expected_default_code():
    """What a plain run must say on this machine."""
    if not HAVE_PROBE:  # a LibTorch the build found but could not build against is the suite's gap, not the machine's
        return ("SUITE_INCOMPLETE", 19) if BUILD.torch_unbuildable else ("TORCH_MISSING", 3)
    if BACKEND == "none":
        return "GPU_BACKEND_ABSENT", 5
    return ("GPU_CHECK_PASSED", 0) if machine_has_gpu() else ("GPU_UNAVAILABLE", 6)


VERDICT = re.compile(r"^Verdict: (\w+) \(exit (\d+)\)(?: at stage (\S+))?(?: on GPU \d+)?(?: \[injected fault [^]]*\])?$",
                     re.M)


class Result:
    def __init__(self, rc, stdout, stderr, seconds=0.0, report=None):
        self.rc = rc
        self.stdout = stdout
        self.stderr = stderr
        self.seconds = seconds
        self.report = report

    def layer_line(self, layer_id):
        """The terminal's line of one layer ("  L2  backend & device  passed  (1/5 passed)  0.00 s"), or ""."""
        return next((l for l in (self.stdout or "").splitlines() if l.startswith(f"  {layer_id} ")), "")

    def got(self):
        """(code, exit, stage) as the run showed them: its report, else its terminal output."""
        if self.report is not None:
            return self.report["code"], self.rc, self.report["stage"]
        m = VERDICT.search(self.stdout or "")
        if m:
            return m[1], self.rc, m[3]
        if "OUTPUT_WRITE_FAILED" in (self.stderr or ""):
            return "OUTPUT_WRITE_FAILED", self.rc, None
        if "usage error" in (self.stderr or ""):
            return "USAGE_ERROR", self.rc, None
        return "(none)", self.rc, None


def rendezvous_port():
    """A free TCP port for a job's rank 0, below the kernel's ephemeral range: a port the kernel picks for
    bind(0) or for any connect() of a test running beside this one could be taken again before rank 0
    binds it (the ranks' own Gloo connections take ephemeral ports too)."""
    import random
    import socket
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    for _ in range(200):
        port = random.randrange(10000, max(low, 10001))
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port
    raise RuntimeError("no free port below the ephemeral range")


def read(path):
    with open(path) as f:
        return f.read()


VALIDATED = {"reports": 0, "unvalidated": 0}


def schema_validator(schema):
    """The validator of the schema's own draft (2020-12) where python3-jsonschema has it (4.x: Debian 12,
    Ubuntu 24.04), else Draft 7 (3.2: Ubuntu 22.04), which reads the same $defs references and keywords."""
    cls = getattr(jsonschema, "Draft202012Validator", None) or jsonschema.Draft7Validator
    return cls(schema)


def validate(report):
    if jsonschema is None:
        if os.environ.get("KD_ALLOW_NO_VALIDATOR") != "1":
            raise RuntimeError("python3-jsonschema is missing: reports cannot be validated")
        VALIDATED["unvalidated"] += 1
        return
    schema_validator(SCHEMA).validate(report)
    VALIDATED["reports"] += 1


class DiagnosticTest(unittest.TestCase):
    """Each test gets a fresh folder; run() writes the report there and validates it."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="kd-e2e-")
        self.addCleanup(shutil.rmtree, self.dir, True)

    def run_kd(self, *args, report=True, env=None, binary=BIN, timeout=120, prefix=(), cwd=None, preexec_fn=None):
        """Runs the diagnostic (under PREFIX, e.g. unshare); report=True: with --output in self.dir."""
        argv = [*prefix, binary, *args]
        path = os.path.join(self.dir, f"report-{time.monotonic_ns()}.json")
        if report:
            argv += ["--output", path]
        start = time.monotonic()
        proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout, cwd=cwd,
                              preexec_fn=preexec_fn)
        seconds = time.monotonic() - start
        data = None
        if report and os.path.exists(path):
            with open(path) as f:
                data = json.load(f)
            validate(data)
            self.assertEqual(data["exit_code"], proc.returncode, "exit code and report must agree")
        return Result(proc.returncode, proc.stdout, proc.stderr, seconds, data)

    def assertVerdict(self, result, code, exit_code, stage=None):
        msg = f"stdout:\n{result.stdout[-3000:]}\nstderr:\n{result.stderr[-2000:]}"
        self.assertEqual(result.rc, exit_code, msg)
        self.assertIsNotNone(result.report, "the report was not written\n" + msg)
        self.assertEqual(result.report["code"], code, msg)
        if stage is not None:
            self.assertEqual(result.report["stage"], stage, msg)
        self.assertIn(f"Verdict: {code} (exit {exit_code})", result.stdout)


def copy_alone(t, b, probe=None, folder=None, full=True):
    """The diagnostic (with kernodeck-diagnostic-full, unless FULL is false) copied into FOLDER (default: a new one),
    beside PROBE (as libkd_probe.so) or no probe."""
    folder = folder or os.path.join(t.dir, "alone")
    os.makedirs(folder, exist_ok=True)
    binary = os.path.join(folder, "kernodeck-diagnostic")
    shutil.copy(b.bin, binary)
    if full:
        shutil.copy(b.full_program, folder)
    if probe:
        shutil.copy(probe, os.path.join(folder, "libkd_probe.so"))
    return binary


def loaded_library(t, b, prefix):
    """(soname, path) of the library starting with PREFIX that the probe loads, from ldd."""
    out = subprocess.run(["ldd", b.probe], capture_output=True, text=True, timeout=60).stdout
    for line in out.splitlines():
        name, _, rest = line.strip().partition(" => ")
        if name.startswith(prefix) and rest.startswith("/"):
            return name, rest.split(" (")[0]
    t.fail(f"the probe loads no {prefix}*:\n{out}")


def job_plan(kind, options, **role):
    """A run plan (contract/run_plan.h) as this tool writes one for a job of ROLE kind."""
    return {"plan_version": 2, "role": {"kind": kind, **role}, "options": options}


def job_events(stdout):
    """The events a job said on its standard output (one JSON object a line), by kind."""
    said = {}
    for line in (stdout.decode() if isinstance(stdout, bytes) else stdout).splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and "ev" in event:
            said.setdefault(event["ev"], []).append(event)
    return said


def needs_probe(test):
    return unittest.skipUnless(HAVE_PROBE, "built without LibTorch: only TORCH_MISSING can be checked")(test)
