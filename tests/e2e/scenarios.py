"""The fault matrix: every code from a real cause. One table, run two ways: test_faults.py runs
the rows that the build under test and this machine can show (ctest -L self), and
scripts/fault-matrix runs every row on the build it needs and prints the table.

A row runs the real diagnostic in a real situation, checks what that situation requires (a file
left untouched, a time limit kept, a message that names the cause) with unittest assertions, and
returns the Result whose code, exit code and stage the table compares."""
import fnmatch
import json
import os
import resource
import shutil
import signal
import subprocess
import time
import zipfile
from dataclasses import dataclass

from kd import Result, copy_alone, gpu_count, loaded_library, read, rendezvous_port, validate
from sandbox import SETUP_FAILED, as_unprivileged, in_mount_namespace

ANY = "*"  # the stage is not compared (a pass ends at whichever stage ran last)
ALL = ("cuda", "cpu-only", "no-torch")
PROBE = ("cuda", "cpu-only")


@dataclass
class Row:
    key: str
    code: str
    exit: int
    stage: object  # None (no stage), ANY, or an fnmatch pattern
    cause: str
    builds: tuple  # the build kinds it can run on, preferred first
    machine: str  # "any", "gpu" or "no-gpu"
    fn: object

    def expected(self):
        return f"{self.code}/{self.exit}/{'-' if self.stage is None else self.stage}"

    def not_here(self, build, has_gpu):
        """Why this row cannot run on BUILD on this machine, or None."""
        if self.machine == "gpu" and not has_gpu:
            return "needs a GPU"
        if self.machine == "no-gpu" and has_gpu:
            return "needs a machine without a GPU"
        if build.kind not in self.builds:
            return f"needs a {' or '.join(self.builds)} build (this one is {build.kind})"
        return None

    def mismatch(self, got):
        """What differs between the expected and the GOT (code, exit, stage), or None."""
        code, exit_code, stage = got
        if (code, exit_code) != (self.code, self.exit):
            return f"expected {self.code} (exit {self.exit}), got {code} (exit {exit_code})"
        if self.stage is None and stage is not None or self.stage not in (None, ANY) and not (
                stage and fnmatch.fnmatchcase(stage, self.stage)):
            return f"expected stage {self.stage}, got {stage}"
        return None


ROWS = []


def row(code, exit_code, stage, cause, builds=ALL, machine="any", key=None):
    def add(fn):
        ROWS.append(Row(key or fn.__name__, code, exit_code, stage, cause, builds, machine, fn))
        return fn
    return add


def message(r):
    return r.report["error"]["message"] if r.report and r.report["error"] else ""


def shown(r):
    return f"stdout:\n{r.stdout[-3000:]}\nstderr:\n{r.stderr[-2000:]}"


def wait_until_hanging(t, supervisor, timeout=30):
    """The worker's pid once it sits in the injected CPU hang: LibTorch loaded, main thread asleep."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            kids = read(f"/proc/{supervisor.pid}/task/{supervisor.pid}/children").split()
            if kids and "libkd_probe" in read(f"/proc/{kids[0]}/maps") and "nanosleep" in read(f"/proc/{kids[0]}/wchan"):
                return int(kids[0])
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            pass
        time.sleep(0.05)
    t.fail("the worker never reached its injected hang")


# --- 0: passes come from a real run too -------------------------------------------------------

@row("GPU_CHECK_PASSED", 0, ANY, "default run on a GPU", builds=("cuda",), machine="gpu")
def gpu_pass(t, b):
    r = t.run_kd(binary=b.bin)
    t.assertEqual(r.report["execution"]["device"], "cuda:0", shown(r))
    t.assertEqual(r.report["execution"]["loss"], 196.0)
    return r


@row("CPU_CHECK_PASSED", 0, ANY, "--device cpu (LibTorch 1.13 preferred)", builds=("cpu-only", "cuda"))
def cpu_pass(t, b):
    r = t.run_kd("--device", "cpu", binary=b.bin)
    t.assertEqual(r.report["execution"], {"device": "cpu", "product_verified": True, "gradient_verified": True,
                                          "loss": 196.0, "arch_supported": None}, shown(r))
    return r


# --- 2: bad input: exit 2, a message naming the option, nothing run, nothing written ---------

USAGE = {
    "device": [(["--device", "gpu"], "--device"), (["--device", ""], "--device"), (["--device=rocm"], "--device"),
               (["--device", "cpu", "--device", "cuda"], "--device")],
    "device-index": [(["--device-index", "-1"], "--device-index"), (["--device-index", "one"], "--device-index"),
                     (["--device-index", ""], "--device-index"), (["--device-index", "1024"], "--device-index"),
                     (["--device-index", "1.5"], "--device-index"),
                     (["--device-index", "0", "--device-index=1"], "--device-index")],
    "timeout": [(["--timeout", "4"], "--timeout"), (["--timeout", "121"], "--timeout"), (["--timeout"], "--timeout"),
                (["--timeout", ""], "--timeout"), (["--timeout", "ten"], "--timeout"),
                (["--timeout", "1e1"], "--timeout"), (["--timeout", "10", "--timeout", "20"], "--timeout")],
    "output": [(["--output", "--in-process"], "--output"), (["--output="], "--output"),
               (["--output", "a.json"], "--output")],  # with the --output every case gets: twice
    "layers": [(["--layers", "L9"], "--layers"), (["--layers", ""], "--layers"), (["--layers", "L1,"], "--layers"),
               (["--layers", "L1", "--layers", "L2"], "--layers"),
               (["--layers", "L1", "--gtest_filter=L1_RuntimeImport.*"], "--gtest_filter")],
    "inject-fault": [(["--inject-fault", "meteor"], "--inject-fault"), (["--inject-fault", ""], "--inject-fault"),
                     (["--inject-fault", "hang", "--inject-fault", "abort"], "--inject-fault")],
    "gtest": [(["--gtest_filter="], "--gtest_filter"), (["--gtest_repeat=1", "--gtest_repeat=2"], "--gtest_repeat")],
    "unknown": [(["--frobnicate"], "--frobnicate"), (["extra-word"], "extra-word"), (["--in-process=yes"], "--in-process"),
                (["--host-check=yes"], "--host-check"), (["--python", "/no/such/python"], "--python")],
}


def usage_row(group, cases):
    def bad_input(t, b):
        last = None
        for args, named in cases:
            with t.subTest(args=args):
                path = os.path.join(t.dir, "never.json")
                last = t.run_kd(*args, "--output", path, report=False, binary=b.bin, cwd=t.dir, timeout=30)
                t.assertEqual(last.rc, 2, f"{args}: {last.stderr}")
                t.assertIn(named, last.stderr, args)
                t.assertEqual(last.stdout, "", args)  # nothing ran
                t.assertEqual(os.listdir(t.dir), [], args)  # nothing written
        return last
    options = "unknown options and values" if group == "unknown" else f"--{group}: empty, out-of-range, " \
              "malformed or duplicated values"
    row("USAGE_ERROR", 2, None, options, key=f"usage_{group.replace('-', '_')}")(bad_input)


for _group, _cases in USAGE.items():
    usage_row(_group, _cases)


# --- 3: LibTorch is not there ---------------------------------------------------

@row("TORCH_MISSING", 3, "L1.import", "LibTorch's folder gone (an empty mount over it)", builds=("cuda",))
def libtorch_absent(t, b):
    _, path = loaded_library(t, b, "libc10.so")
    folder = os.path.dirname(path)
    if folder.startswith(("/lib", "/usr/lib")):
        t.skipTest(f"this LibTorch sits in the system folder {folder}")
    prefix = in_mount_namespace(t, f"mount -t tmpfs -o size=64k kd-gone '{folder}'")
    r = t.run_kd("--device", "cpu", binary=b.bin, prefix=prefix)
    t.assertNotEqual(r.rc, SETUP_FAILED, r.stderr)
    t.assertRegex(message(r), r"^lib(c10|torch)\S*\.so\S*: cannot open shared object file", shown(r))
    t.assertNotIn(folder, json.dumps(r.report))
    return r


@row("TORCH_MISSING", 3, "L1.import", "a build configured without LibTorch", builds=("no-torch",))
def no_torch_build(t, b):
    r = t.run_kd(binary=b.bin)
    t.assertIn("this build has no LibTorch probe", message(r), shown(r))
    t.assertFalse(r.report["pytorch"]["loaded"])
    return r


# --- 4: LibTorch is there but does not load --------------------------------------------------

@row("TORCH_IMPORT_FAILED", 4, "L1.import", "a corrupt libc10 found first through LD_LIBRARY_PATH", builds=PROBE)
def corrupt_libc10(t, b):
    soname, _ = loaded_library(t, b, "libc10.so")  # libc10.so (pip) or libc10.so.1.13 (Debian)
    libs = os.path.join(t.dir, "libs")
    os.mkdir(libs)
    open(os.path.join(libs, soname), "wb").close()  # "file too short"
    r = t.run_kd("--device", "cpu", binary=b.bin, env=dict(os.environ, LD_LIBRARY_PATH=libs))
    t.assertIn(f"{soname}: file too short", message(r), shown(r))
    t.assertNotIn(libs, message(r))
    return r


@row("TORCH_IMPORT_FAILED", 4, "L1.import", "a probe that needs an undefined symbol")
def undefined_symbol(t, b):
    r = t.run_kd("--device", "cpu", binary=copy_alone(t, b, probe=b.undefined_symbol_probe))
    t.assertIn("undefined symbol: kd_symbol_no_library_defines", message(r), shown(r))
    t.assertNotIn(t.dir, message(r))
    return r


# --- 19: this build of the suite cannot run what was asked (nothing concluded about the machine) ---------

def listing(binary, *selection):
    return subprocess.run([binary, "--device", "cpu", *selection, "--gtest_list_tests"], capture_output=True, text=True,
                          timeout=60).stdout


@row("SUITE_INCOMPLETE", 19, "L1.import", "kernodeck-diagnostic-full not built (L4-L8, aggregate), L4 asked for",
     builds=PROBE)
def full_program_absent(t, b):
    binary = copy_alone(t, b, probe=b.probe, full=False)
    shutil.copy(b.probe_heavy, os.path.dirname(binary))
    r = t.run_kd("--device", "cpu", "--layers", "L1,L4", binary=binary)
    t.assertIn("this build of the suite has no kernodeck-diagnostic-full", message(r), shown(r))
    assert_suite_incomplete(t, b, r, "kernodeck-diagnostic-full")  # the command, also as the next action
    t.assertTrue(r.report["pytorch"]["loaded"], shown(r))  # nothing is said against the machine's LibTorch
    for layer in ("L5", "L6", "L7", "L8"):  # each of its layers: L1 says so before any of them starts
        other = t.run_kd("--device", "cpu", "--layers", f"L1,{layer}", binary=binary)
        t.assertEqual((other.rc, other.report["code"], other.report["stage"]), (19, "SUITE_INCOMPLETE", "L1.import"),
                      shown(other))
    # A filter that selects one of them: the same (the first program knows every step, from the one list).
    other = t.run_kd("--device", "cpu", "--gtest_filter=L5_Memory.Growth", binary=binary)
    t.assertEqual((other.rc, other.report["code"]), (19, "SUITE_INCOMPLETE"), shown(other))
    # Its steps are known all the same: a selection lists what it would with kernodeck-diagnostic-full.
    for selection in (("--full",), ("--layers", "L4,L7"), ("--gtest_filter=L5_*:L8_Collective.Join",)):
        t.assertEqual(listing(binary, *selection), listing(b.bin, *selection), selection)
    t.assertIn("L8_Collective.\n  Join\n", listing(binary, "--full"))
    # The plain run uses none of it: the first build's diagnostic gives the verdict.
    plain = t.run_kd("--device", "cpu", binary=binary)
    t.assertEqual((plain.rc, plain.report["code"]), (0, "CPU_CHECK_PASSED"), shown(plain))
    agg = subprocess.run([binary, "aggregate", t.dir], capture_output=True, text=True, timeout=60)
    t.assertEqual(agg.returncode, 19, agg.stderr)
    t.assertIn("SUITE_INCOMPLETE (exit 19): aggregate: this build of the suite has no kernodeck-diagnostic-full",
               agg.stderr)
    return r


@row("SUITE_INCOMPLETE", 19, "L1.import", "kernodeck-diagnostic-full of another build of the suite (build token)",
     builds=PROBE)
def full_program_stale(t, b):
    binary = copy_alone(t, b, probe=b.probe)
    shutil.copy(b.probe_heavy, os.path.dirname(binary))
    # Another build's program: the same code with another build token (a build token is made at each configure).
    full = os.path.join(os.path.dirname(binary), "kernodeck-diagnostic-full")
    version = subprocess.run([full, "--version"], capture_output=True, text=True, timeout=60).stdout
    token = version.split("build token: ")[1].split()[0]
    with open(full, "rb") as f:
        data = f.read()
    t.assertEqual(data.count(token.encode()), 1)
    with open(full, "wb") as f:
        f.write(data.replace(token.encode(), b"f" * len(token)))
    r = t.run_kd("--device", "cpu", "--layers", "L1,L6", binary=binary)
    t.assertIn("kernodeck-diagnostic-full beside this program is from another build of the suite", message(r), shown(r))
    agg = subprocess.run([binary, "aggregate", t.dir], capture_output=True, text=True, timeout=60)
    t.assertEqual(agg.returncode, 19, agg.stderr)
    return r


def build_shown(b):
    """B's build folder as a SUITE_INCOMPLETE command names it: as seen from the checkout, else its path."""
    shown = os.path.relpath(b.folder, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    return b.folder if shown.startswith("..") else shown


def assert_suite_incomplete(t, b, r, target):
    """19 at L1.import, the build command in the message, as the next action and on the terminal."""
    command = f"cmake --build {build_shown(b)} --target {target}"
    t.assertEqual((r.rc, r.report["code"], r.report["stage"]), (19, "SUITE_INCOMPLETE", "L1.import"), shown(r))
    t.assertTrue(message(r).endswith("; build it with: " + command), shown(r))
    t.assertEqual(r.report["next_action"], command)
    t.assertEqual(r.report["error"]["next_action"], command)
    t.assertIn(f"next:  {command}", r.stdout)


@row("SUITE_INCOMPLETE", 19, "L1.import", "the probe absent from a build that found LibTorch (the binary copied alone)",
     builds=PROBE)
def probe_not_built(t, b):
    r = t.run_kd("--device", "cpu", binary=copy_alone(t, b))
    t.assertFalse(r.report["pytorch"]["loaded"], shown(r))
    t.assertIn("the LibTorch probe (<path>/libkd_probe.so) is not built, although this build found LibTorch", message(r))
    assert_suite_incomplete(t, b, r, "kd_probe")
    return r


@row("SUITE_INCOMPLETE", 19, "L1.import", "the probe the build could not make (libkd_probe.unbuilt, as CMake writes it)",
     builds=PROBE)
def probe_unbuildable(t, b):
    binary = copy_alone(t, b)
    with open(os.path.join(os.path.dirname(binary), "libkd_probe.unbuilt"), "w") as f:
        f.write("LibTorch 2.11.0 is a CUDA build and its export file (Caffe2Targets.cmake) is missing\n")
    r = t.run_kd("--device", "cpu", binary=binary)
    t.assertIn("no LibTorch probe although LibTorch was found: LibTorch 2.11.0 is a CUDA build", message(r), shown(r))
    build = build_shown(b)
    t.assertEqual(r.report["next_action"], f"cmake {build} && cmake --build {build} --target kd_probe")
    t.assertEqual(r.rc, 19, shown(r))
    return r


@row("SUITE_INCOMPLETE", 19, "L1.import", "the probe's heavy part absent (libkd_probe.so copied alone), L4 asked for",
     builds=PROBE)
def heavy_part_absent(t, b):
    binary = copy_alone(t, b, probe=b.probe)
    r = t.run_kd("--device", "cpu", "--layers", "L1,L4", binary=binary)
    t.assertIn("the probe's heavy part (libkd_probe_heavy.so: layers L4 to L8) is not built", message(r), shown(r))
    t.assertTrue(r.report["pytorch"]["loaded"], shown(r))  # LibTorch itself loaded: the report says so
    assert_suite_incomplete(t, b, r, "kd_probe_heavy")
    for layer in ("L5", "L6", "L7", "L8"):  # every layer past L3 uses it: L1 says so, not a later runtime error
        other = t.run_kd("--device", "cpu", "--layers", f"L1,{layer}", binary=binary)
        assert_suite_incomplete(t, b, other, "kd_probe_heavy")
    # The plain run uses none of it: a first build of libkd_probe.so alone gives the verdict.
    plain = t.run_kd("--device", "cpu", binary=binary)
    t.assertEqual((plain.rc, plain.report["code"]), (0, "CPU_CHECK_PASSED"), shown(plain))
    return r


@row("SUITE_INCOMPLETE", 19, "L1.import", "the probe's heavy part (or the probe) from an earlier build of the suite",
     builds=PROBE)
def heavy_part_stale(t, b):
    binary = copy_alone(t, b, probe=b.probe)
    shutil.copy(b.other_build_probe, os.path.join(os.path.dirname(binary), "libkd_probe_heavy.so"))
    r = t.run_kd("--device", "cpu", "--layers", "L1,L6", binary=binary)
    t.assertIn("libkd_probe_heavy.so is from another build of the suite than libkd_probe.so", message(r), shown(r))
    t.assertTrue(r.report["pytorch"]["loaded"], shown(r))
    assert_suite_incomplete(t, b, r, "kd_probe_heavy")
    # The probe itself from that earlier build: refused before it is used, as the suite's gap too.
    old = t.run_kd("--device", "cpu", binary=copy_alone(t, b, probe=b.other_build_probe, folder=t.dir + "/old"))
    t.assertIn("the LibTorch probe is from another build of the suite", message(old), shown(old))
    assert_suite_incomplete(t, b, old, "kd_probe kernodeck-diagnostic")
    return r


# --- 5, 6, 7: backend and device -------------------------------------------------------------

@row("GPU_BACKEND_ABSENT", 5, "L2.backend", "Debian's CPU-only LibTorch 1.13, default run", builds=("cpu-only",))
def cpu_only_libtorch(t, b):
    r = t.run_kd(binary=b.bin)
    pt = r.report["pytorch"]
    t.assertEqual((pt["backend"], pt["cuda_compiled"], pt["hip_compiled"]), ("none", None, None), shown(r))
    t.assertIn("declares neither CUDA nor HIP", message(r))
    return r


@row("GPU_UNAVAILABLE", 6, "L2.gpu_available", "CUDA LibTorch on a machine without a GPU", builds=("cuda",),
     machine="no-gpu")
def no_gpu(t, b):
    r = t.run_kd(binary=b.bin)
    t.assertFalse(r.report["pytorch"]["gpu_available"], shown(r))
    t.assertEqual(r.report["pytorch"]["visible_device_count"], 0)
    t.assertEqual(r.report["pytorch"]["backend"], "cuda")
    t.assertTrue(message(r))
    t.assertEqual(r.report["next_action"], r.report["error"]["next_action"])  # one next action, specific or the code's
    t.assertIsNone(r.report["execution"]["device"])  # nothing ran on any device
    return r


@row("GPU_UNAVAILABLE", 6, "L2.gpu_available", "CUDA_VISIBLE_DEVICES= (every GPU hidden)", builds=("cuda",),
     machine="gpu")
def gpu_hidden(t, b):
    r = t.run_kd(binary=b.bin, env=dict(os.environ, CUDA_VISIBLE_DEVICES=""))
    t.assertEqual(r.report["pytorch"]["visible_device_count"], 0, shown(r))
    return r


@row("GPU_UNAVAILABLE", 6, "L2.gpu_available", "CUDA_VISIBLE_DEVICES=<one past the last GPU>", builds=("cuda",),
     machine="gpu")
def gpu_visible_is_absent(t, b):
    return t.run_kd(binary=b.bin, env=dict(os.environ, CUDA_VISIBLE_DEVICES=str(gpu_count())))


@row("DEVICE_INDEX_INVALID", 7, "L2.device_index", "--device-index <one past the last GPU>", builds=("cuda",),
     machine="gpu")
def device_index_past_the_last(t, b):
    r = t.run_kd("--device-index", str(gpu_count()), binary=b.bin)
    t.assertIn(f"device index {gpu_count()} requested", message(r), shown(r))
    return r


# --- 8, 9: the tiny computation (test-only injection, documented in the README) --------------

def injected(fault, device, code, exit_code, stage, cause, machine="any", builds=PROBE, check=None):
    def run(t, b):
        args = ["--inject-fault", fault] + (["--device", "cpu"] if device == "cpu" else [])
        r = t.run_kd(*args, binary=b.bin)
        t.assertEqual(r.report["requested"]["fault_injection"], fault, shown(r))
        t.assertTrue(any("fault injection" in w for w in r.report["warnings"]))
        if check:
            check(t, r)
        return r
    row(code, exit_code, stage, cause, builds=builds, machine=machine, key=f"{device}_{fault.replace('-', '_')}")(run)


def check_wrong_product(t, r):
    t.assertIn("[[3,3],[7,7]]", message(r))
    t.assertFalse(r.report["execution"]["product_verified"])


def check_no_backtrace(t, r):
    t.assertNotIn("frame #", message(r))  # no raw backtrace


for _device, _machine in (("cpu", "any"), ("cuda", "gpu")):
    _builds = PROBE if _device == "cpu" else ("cuda",)
    injected("wrong-product", _device, "CHECK_FAILED", 8, "L3.product", f"injected wrong input ({_device})",
             _machine, _builds, check_wrong_product)
    injected("oom", _device, "OUT_OF_MEMORY", 9, "L3.product", f"injected 1 PiB allocation ({_device})",
             _machine, _builds)
    injected("runtime-error", _device, "RUNTIME_ERROR", 9, "L3.product", f"injected shape mismatch ({_device})",
             _machine, _builds, check_no_backtrace)

# Takes every byte it can with plain cudaMalloc (never managed memory), largest pieces first.
MEMORY_HOG = r"""
import sys, time, torch
held = []
for mib in (4096, 1024, 256, 64, 16, 2):
    while True:
        try:
            held.append(torch.empty(mib << 20, dtype=torch.uint8, device="cuda"))
        except RuntimeError:
            break
free, total = torch.cuda.mem_get_info()
print(f"holding {sum(h.numel() for h in held) >> 20} MiB of {total >> 20} MiB, {free >> 20} MiB free", flush=True)
time.sleep(600)
"""


def torch_python():
    """A python with torch (the machine's, else the private one of scripts/setup), or None."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for python in (os.environ.get("KD_PYTHON", "python3"), os.path.join(root, ".deps/torch-venv/bin/python")):
        if shutil.which(python) and subprocess.run([python, "-c", "import torch"], capture_output=True).returncode == 0:
            return python
    return None


@row("OUT_OF_MEMORY", 9, "L[23].*", "another process holds almost all GPU memory", builds=("cuda",), machine="gpu")
def gpu_memory_taken(t, b):
    python = torch_python()
    if not python:
        t.skipTest("no python with torch to hold the GPU's memory")
    hog = subprocess.Popen([python, "-c", MEMORY_HOG], stdout=subprocess.PIPE, text=True)
    t.addCleanup(hog.wait)
    t.addCleanup(hog.kill)
    held = hog.stdout.readline().strip()
    t.assertTrue(held.startswith("holding"), "the memory hog did not start")
    r = t.run_kd(binary=b.bin)
    r.note = held  # shown in the matrix's log
    return r


@row("OUT_OF_MEMORY", 9, "L5.oom.load", "L5 with --memory-fraction 0.000001: its 64 MiB of weights cannot load",
     builds=("cuda",), machine="gpu")
def gpu_l5_weights_do_not_fit(t, b):
    r = t.run_kd("--layers", "L5", "--memory-fraction", "0.000001", binary=b.bin)
    t.assertEqual(r.report["memory"]["oom"]["phase"], "load", shown(r))
    t.assertIsNotNone(r.report["memory"]["oom"]["requested_bytes"])  # parsed from LibTorch's own message
    t.assertIn("weights do not fit", r.report["error"]["cause"])
    return r


# --- 15: memory kept across iterations (test-only selection of a real leak) ------------------

@row("MEMORY_CHECK_FAILED", 15, "L5.growth", "L5's loop keeps every loss tensor (--inject-fault leak)",
     builds=("cuda",), machine="gpu")
def gpu_l5_leak(t, b):
    r = t.run_kd("--layers", "L5", "--inject-fault", "leak", binary=b.bin)
    t.assertIn("per iteration", message(r), shown(r))
    t.assertGreater(r.report["memory"]["iterations"]["growth_per_iteration_bytes"], 1 << 20)
    return r


# --- 10, 11: hangs and deaths ----------------------------------------------------------------

@row("TIMEOUT", 10, "L3.synchronize", "injected CPU hang, --timeout 5: ends within 6 s", builds=PROBE)
def cpu_hang(t, b):
    r = t.run_kd("--device", "cpu", "--inject-fault", "hang", "--timeout", "5", binary=b.bin)
    t.assertLess(r.seconds, 6.0)
    t.assertIn("last finished step: load_library", message(r), shown(r))  # the markers name it
    return r


@row("TIMEOUT", 10, "L3.synchronize", "a real GPU spin (at::cuda::sleep), --timeout 5: ends within 6 s",
     builds=("cuda",), machine="gpu")
def gpu_spin(t, b):
    r = t.run_kd("--inject-fault", "hang", "--timeout", "5", binary=b.bin)
    t.assertLess(r.seconds, 6.0)
    return r


@row("WORKER_FAILED", 11, "L3.product", "injected abort in the worker", builds=PROBE)
def worker_abort(t, b):
    r = t.run_kd("--device", "cpu", "--inject-fault", "abort", binary=b.bin)
    t.assertIn("SIGABRT", message(r), shown(r))
    t.assertIn("last finished step: load_library", message(r), shown(r))
    return r


@row("WORKER_FAILED", 11, "L3.synchronize", "the worker killed from outside with SIGKILL", builds=PROBE)
def worker_killed(t, b):
    path = os.path.join(t.dir, "killed.json")
    start = time.monotonic()
    sup = subprocess.Popen([b.bin, "--device", "cpu", "--inject-fault", "hang", "--timeout", "60", "--output", path],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    os.kill(wait_until_hanging(t, sup), signal.SIGKILL)
    out, err = sup.communicate(timeout=30)
    report = json.loads(read(path))
    validate(report)
    t.assertIn("SIGKILL", report["error"]["message"])
    return Result(sup.returncode, out, err, time.monotonic() - start, report)


# --- 12: the report is saved where asked, or nothing changes --------------------------------

def refused(t, b, path, *, prefix=(), cwd=None):
    """Runs with --output PATH and checks the refusal: exit 12 before anything ran, no temp file."""
    r = t.run_kd("--device", "cpu", "--output", path, report=False, binary=b.bin, prefix=prefix, cwd=cwd)
    t.assertEqual(r.rc, 12, shown(r))
    t.assertIn("OUTPUT_WRITE_FAILED", r.stderr)
    t.assertNotIn("[ RUN      ]", r.stdout)  # refused before anything ran
    t.assertEqual([f for f in os.listdir(t.dir) if ".kd-" in f], [], "no temporary file may remain")
    return r


@row("OUTPUT_WRITE_FAILED", 12, None, "--output names an existing file")
def existing_file(t, b):
    path = os.path.join(t.dir, "report.json")
    with open(path, "w") as f:
        f.write("precious")
    r = refused(t, b, path)
    t.assertEqual(read(path), "precious")
    return r


@row("OUTPUT_WRITE_FAILED", 12, None, "--output names an existing symlink")
def existing_symlink(t, b):
    target, link = os.path.join(t.dir, "target.txt"), os.path.join(t.dir, "link.json")
    with open(target, "w") as f:
        f.write("precious")
    os.symlink(target, link)
    r = refused(t, b, link)
    t.assertEqual(os.readlink(link), target)
    t.assertEqual(read(target), "precious")
    return r


@row("OUTPUT_WRITE_FAILED", 12, None, "--output names a dangling symlink")
def dangling_symlink(t, b):
    link, missing = os.path.join(t.dir, "dangling.json"), os.path.join(t.dir, "nowhere.json")
    os.symlink(missing, link)
    r = refused(t, b, link)
    t.assertEqual(os.readlink(link), missing)
    t.assertFalse(os.path.exists(missing))
    return r


@row("OUTPUT_WRITE_FAILED", 12, None, "--output in a folder that does not exist")
def missing_folder(t, b):
    r = refused(t, b, os.path.join(t.dir, "no-such-folder", "report.json"))
    t.assertIn("does not exist", r.stderr)
    return r


@row("OUTPUT_WRITE_FAILED", 12, None, "--output in a read-only folder (run as nobody when root)")
def read_only_folder(t, b):
    ro = os.path.join(t.dir, "ro")
    os.mkdir(ro, 0o555)
    r = refused(t, b, os.path.join(ro, "report.json"), prefix=as_unprivileged(t, t.dir))
    t.assertIn("not writable", r.stderr)
    t.assertEqual(os.listdir(ro), [])
    return r


@row("OUTPUT_WRITE_FAILED", 12, ANY, "--output in /proc, where nothing can be created (even by root)")
def proc_folder(t, b):
    # A folder that root may write to by its mode but not in fact: the run goes on, the write fails.
    r = t.run_kd("--device", "cpu", "--output", "/proc/kd-report.json", report=False, binary=b.bin)
    t.assertEqual(r.rc, 12, shown(r))
    t.assertIn("OUTPUT_WRITE_FAILED", r.stdout + r.stderr)
    t.assertFalse(os.path.exists("/proc/kd-report.json"))
    return r


@row("OUTPUT_WRITE_FAILED", 12, None, "--output /dev/full (an existing device: left alone)")
def dev_full(t, b):
    before = os.stat("/dev/full")
    r = refused(t, b, "/dev/full")
    t.assertEqual(os.stat("/dev/full").st_rdev, before.st_rdev)
    return r


@row("OUTPUT_WRITE_FAILED", 12, "report", "a disk that is full (a 64 KiB tmpfs, filled): ENOSPC", builds=PROBE)
def disk_full(t, b):
    folder, listing = os.path.join(t.dir, "full"), os.path.join(t.dir, "listing.txt")
    os.mkdir(folder)
    prefix = in_mount_namespace(
        t, f"mount -t tmpfs -o size=64k kd-full '{folder}' && {{ cat /dev/zero > '{folder}/filler' 2>/dev/null; true; }}",
        after=f"ls -A '{folder}' > '{listing}'")
    r = t.run_kd("--device", "cpu", "--output", os.path.join(folder, "report.json"), report=False, binary=b.bin,
                 prefix=prefix)
    t.assertNotEqual(r.rc, SETUP_FAILED, r.stderr)
    t.assertIn("No space left on device", r.stdout, shown(r))
    t.assertEqual(read(listing).split(), ["filler"], "a report or a temporary file was left on the full disk")
    return r


@row("OUTPUT_WRITE_FAILED", 12, "report", "a file size limit (RLIMIT_FSIZE 2 KiB): EFBIG, not SIGXFSZ", builds=PROBE)
def file_size_limit(t, b):
    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (2048, 2048))
    r = t.run_kd("--device", "cpu", "--output", os.path.join(t.dir, "report.json"), report=False, binary=b.bin,
                 preexec_fn=limit)
    t.assertIn("File too large", r.stdout, shown(r))
    t.assertEqual(os.listdir(t.dir), [], "a partial report or a temporary file was left")
    return r


@row("OUTPUT_WRITE_FAILED", 12, "report", "two runs racing for one --output: exactly one writes", builds=PROBE)
def racing_writers(t, b):
    path = os.path.join(t.dir, "report.json")
    argv = [b.bin, "--device", "cpu", "--output", path]
    runs = [subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in runs]
    rcs = [p.returncode for p in runs]
    t.assertEqual(sorted(rcs), [0, 12], outs)
    winner, loser = (0, 1) if rcs[0] == 0 else (1, 0)
    t.assertIn("appeared while the run was in progress", outs[loser][0])  # both ran: the race was real
    report = json.loads(read(path))
    validate(report)
    t.assertIn(f"run {report['run_id']}", outs[winner][0])  # the file is the winner's, whole
    t.assertEqual(os.listdir(t.dir), ["report.json"])
    return Result(rcs[loser], *outs[loser])


@row("OUTPUT_WRITE_FAILED", 12, "report", "a file created at the --output path during the run", builds=PROBE)
def file_appears_during_run(t, b):
    path = os.path.join(t.dir, "report.json")
    sup = subprocess.Popen([b.bin, "--device", "cpu", "--inject-fault", "hang", "--timeout", "5", "--output", path],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_until_hanging(t, sup)
    with open(path, "w") as f:
        f.write("precious")
    out, err = sup.communicate(timeout=30)
    t.assertIn("appeared while the run was in progress", out)
    t.assertEqual(read(path), "precious")
    t.assertEqual(os.listdir(t.dir), ["report.json"])
    return Result(sup.returncode, out, err)


# --- 13, 14: the user's model (--model, --input; tests/data) ---------------------------------------

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data")


def model_run(t, b, model, **outputs):
    """A CPU run of MODEL with tests/data/tiny_spec.json, its outputs' entries replaced by OUTPUTS."""
    spec = json.loads(read(os.path.join(DATA, "tiny_spec.json")))
    spec["outputs"].update(outputs)
    path = os.path.join(t.dir, "spec.json")
    with open(path, "w") as f:
        json.dump(spec, f)
    tmp = os.path.join(t.dir, "tmp")
    os.mkdir(tmp)
    r = t.run_kd("--device", "cpu", "--model", model, "--input", path, binary=b.bin, env=dict(os.environ, TMPDIR=tmp))
    t.assertEqual(os.listdir(tmp), [])  # nothing extracted or copied is left
    return r


@row("MODEL_LOAD_FAILED", 13, "L4.model_load", "a .pt2 package with a '../' entry: refused before LibTorch", builds=PROBE)
def hostile_package(t, b):
    path = os.path.join(t.dir, "model.pt2")
    with zipfile.ZipFile(os.path.join(DATA, "tiny_model_cpu.pt2")) as zin, zipfile.ZipFile(path, "w") as zout:
        for info in zin.infolist():
            zout.writestr(info, zin.read(info))
        zout.writestr("tiny/../../evil.txt", b"pwned\n")
    r = model_run(t, b, path)
    t.assertIn("has a '..' component", message(r))
    t.assertFalse(os.path.exists(os.path.join(t.dir, "evil.txt")))
    return r


@row("MODEL_LOAD_FAILED", 13, "L4.model_load", "a TorchScript file whose tensor record is truncated", builds=PROBE)
def truncated_tensor_record(t, b):
    path = os.path.join(t.dir, "model.pt")
    with zipfile.ZipFile(os.path.join(DATA, "tiny_model.pt")) as zin, zipfile.ZipFile(path, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info)
            zout.writestr(info, data[:40] if info.filename.endswith("/data/0") else data)
    r = model_run(t, b, path)
    t.assertIn("holds 40 bytes, its tensor storage", message(r))
    return r


@row("APP_CHECK_FAILED", 14, "L4.model_run", "tests/data/tiny_model.pt against a spec expecting 3 outputs", builds=PROBE)
def broken_contract(t, b):
    r = model_run(t, b, os.path.join(DATA, "tiny_model.pt"), count=3)
    t.assertTrue(message(r).startswith("rule 'count'"), message(r))
    return r


# --- 16: a performance floor (GPU only: L6's ceilings are GPU measurements, n/a on the CPU) -------

@row("PERFORMANCE_BELOW_FLOOR", 16, "L6.matmul_*", "--min-matmul-fraction 1: no GPU reaches its datasheet peak",
     builds=("cuda",), machine="gpu")
def matmul_floor(t, b):
    return t.run_kd("--layers", "L6", "--min-matmul-fraction", "1", binary=b.bin)


# --- 17: a rank of the job that never joins (L8's process group, Gloo on the CPU) ------------------

@row("COLLECTIVE_UNREACHABLE", 17, "L8.join", "L8 in a job of 2 ranks whose rank 1 never starts (Gloo, --device cpu, "
     "--timeout 5): rank 0 ends within 10 s naming rank 1", builds=PROBE)
def rank_never_joins(t, b):
    if not b.collective:
        t.skipTest("this LibTorch does not export its Gloo process group: L8 cannot run on it")
    env = {**os.environ, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(rendezvous_port()), "WORLD_SIZE": "2",
           "RANK": "0", "LOCAL_RANK": "0"}
    r = t.run_kd("--device", "cpu", "--layers", "L8", "--timeout", "5", binary=b.bin, env=env)
    t.assertLess(r.seconds, 10.0, shown(r))
    t.assertEqual(r.report["collective"]["join"]["missing_ranks"], [1], shown(r))
    t.assertRegex(message(r), r"^rank 1 did not join within \d+\.\d s$")
    t.assertIn("never started", r.report["error"]["cause"])
    return r


# --- 18: an unhealthy GPU (GPU only: L2's health test reads the NVML facts of the GPU it runs on) ----

@row("GPU_UNHEALTHY", 18, "L2.health", "the stand-in NVML (tests/fake_nvml) at GPU 0's PCI address reports 3 "
     "uncorrected ECC errors", builds=("cuda",), machine="gpu")
def gpu_unhealthy(t, b):
    smi = shutil.which("nvidia-smi")
    if not smi:
        t.skipTest("no nvidia-smi to read GPU 0's PCI address")
    pci = subprocess.run([smi, "--query-gpu=pci.bus_id", "--format=csv,noheader", "-i", "0"], capture_output=True,
                         text=True, timeout=30).stdout.strip()
    env = {**os.environ, "LD_LIBRARY_PATH": b.fake_nvml_full + os.pathsep + os.environ.get("LD_LIBRARY_PATH", ""),
           "KD_FAKE_NVML": "ecc", "KD_FAKE_NVML_GPU1_PCI": pci}
    r = t.run_kd(binary=b.bin, env=env)
    t.assertIn("3 uncorrected ECC errors", message(r), shown(r))
    return r
