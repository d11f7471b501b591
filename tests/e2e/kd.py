"""Helpers for the end-to-end tests: run the real binary, read and validate its report."""
import json
import os
import shutil
import subprocess
import tempfile
import time
import unittest

import jsonschema

BIN = os.environ["KD_BIN"]
SCHEMA = json.load(open(os.environ["KD_SCHEMA"]))
HAVE_PROBE = os.environ.get("KD_HAVE_PROBE") == "ON"
BACKEND = os.environ.get("KD_TORCH_BACKEND", "absent")  # cuda, none or absent


def machine_has_gpu():
    """An oracle independent of the tool: an NVIDIA device node or nvidia-smi listing a GPU."""
    if os.path.exists("/dev/nvidia0"):
        return True
    smi = shutil.which("nvidia-smi")
    if not smi:
        return False
    out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=10)
    return out.returncode == 0 and "GPU" in out.stdout


def expected_default_code():
    """What a plain run must say on this machine."""
    if not HAVE_PROBE:
        return "TORCH_MISSING", 3
    if BACKEND == "none":
        return "GPU_BACKEND_ABSENT", 5
    return ("GPU_CHECK_PASSED", 0) if machine_has_gpu() else ("GPU_UNAVAILABLE", 6)


class Result:
    def __init__(self, proc, seconds, report):
        self.rc = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.seconds = seconds
        self.report = report


def read(path):
    with open(path) as f:
        return f.read()


def validate(report):
    jsonschema.Draft202012Validator(SCHEMA).validate(report)


class DiagnosticTest(unittest.TestCase):
    """Each test gets a fresh folder; run() writes the report there and validates it."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="kd-e2e-")
        self.addCleanup(shutil.rmtree, self.dir, True)

    def run_kd(self, *args, report=True, env=None, binary=BIN, timeout=120):
        argv = [binary, *args]
        path = os.path.join(self.dir, f"report-{time.monotonic_ns()}.json")
        if report:
            argv += ["--output", path]
        start = time.monotonic()
        proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout)
        seconds = time.monotonic() - start
        data = None
        if report and os.path.exists(path):
            with open(path) as f:
                data = json.load(f)
            validate(data)
            self.assertEqual(data["exit_code"], proc.returncode, "exit code and report must agree")
        return Result(proc, seconds, data)

    def assertVerdict(self, result, code, exit_code, stage=None):
        msg = f"stdout:\n{result.stdout[-3000:]}\nstderr:\n{result.stderr[-2000:]}"
        self.assertEqual(result.rc, exit_code, msg)
        self.assertIsNotNone(result.report, "the report was not written\n" + msg)
        self.assertEqual(result.report["code"], code, msg)
        if stage is not None:
            self.assertEqual(result.report["stage"], stage, msg)
        self.assertIn(f"Verdict: {code} (exit {exit_code})", result.stdout)


def needs_probe(test):
    return unittest.skipUnless(HAVE_PROBE, "built without LibTorch: only TORCH_MISSING can be checked")(test)
