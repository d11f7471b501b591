"""CMakePresets.json: cpu, gpu and ci presets of every kind, as CMake itself reads them, and
what configuring with them really sets."""
import json
import os
import re
import subprocess
import tempfile
import unittest

from ctest_run import SOURCE
from kd import read

CMAKE = os.environ["KD_CMAKE"]
PRESETS = json.loads(read(os.path.join(SOURCE, "CMakePresets.json")))
KINDS = ("configurePresets", "buildPresets", "testPresets")
# Preset schema versions and the CMake that reads them (cmake-presets(7)).
CMAKE_FOR_VERSION = {1: (3, 19), 2: (3, 20), 3: (3, 21), 4: (3, 23), 5: (3, 24), 6: (3, 25)}


def visible(kind):
    return {p["name"]: p for p in PRESETS.get(kind, []) if not p.get("hidden")}


def resolved_test_preset(name):
    """A test preset with what it inherits (one level is all this file uses)."""
    p = dict(visible("testPresets")[name])
    for parent in p.get("inherits", []) if isinstance(p.get("inherits"), list) else [p.get("inherits")]:
        base = next(b for b in PRESETS["testPresets"] if b["name"] == parent) if parent else {}
        p = {**base, **p, "output": {**base.get("output", {}), **p.get("output", {})}}
    return p


class Presets(unittest.TestCase):
    def cmake(self, *args):
        proc = subprocess.run([CMAKE, *args], cwd=SOURCE, capture_output=True, text=True, timeout=300)
        self.assertEqual(proc.returncode, 0, proc.stdout[-3000:] + proc.stderr[-3000:])
        return proc.stdout

    def test_cmake_reads_every_preset_kind(self):
        listing = self.cmake("--list-presets=all")
        for kind in KINDS:
            for name in ("cpu", "gpu", "ci"):
                self.assertIn(name, visible(kind), f"{kind} has no '{name}'")
                self.assertIn(f'"{name}"', listing)

    def test_the_presets_need_no_newer_cmake_than_the_build_does(self):
        # Ubuntu 22.04 ships CMake 3.22: the build's minimum, so the presets must read there too.
        text = read(os.path.join(SOURCE, "CMakeLists.txt"))
        minimum = tuple(int(x) for x in re.search(r"cmake_minimum_required\(VERSION (\d+)\.(\d+)", text).groups())
        self.assertLessEqual(CMAKE_FOR_VERSION[PRESETS["version"]], minimum)
        declared = PRESETS["cmakeMinimumRequired"]
        self.assertLessEqual((declared["major"], declared["minor"]), minimum)

    def test_test_presets_choose_their_label_and_refuse_zero_tests(self):
        for name, label in (("gpu", "conformance"), ("cpu", "conformance"), ("ci", "self"), ("self", "self")):
            p = resolved_test_preset(name)
            self.assertEqual(p["filter"]["include"]["label"], label, name)
            self.assertEqual(p["execution"]["noTestsAction"], "error", name)
            self.assertTrue(p["output"]["outputOnFailure"], name)

    def configure(self, preset):
        build = tempfile.mkdtemp(prefix=f"kd-preset-{preset}-")
        self.addCleanup(subprocess.run, ["rm", "-rf", build])
        # Without LibTorch: what is checked here is what the preset sets, not the probe.
        self.cmake("--preset", preset, "-B", build, "-DKD_WITH_TORCH=OFF")
        cache = read(os.path.join(build, "CMakeCache.txt"))
        settings = read(os.path.join(build, "ctest", "conformance-settings.cmake"))
        return build, cache, settings

    def test_configuring_with_cpu_gpu_and_ci_sets_device_and_tests(self):
        for preset, device, testing in (("cpu", "cpu", "OFF"), ("gpu", "cuda", "OFF"), ("ci", "cuda", "ON")):
            build, cache, settings = self.configure(preset)
            self.assertRegex(cache, rf"(?m)^KD_CONFORMANCE_DEVICE:STRING={device}$", preset)
            self.assertRegex(cache, rf"(?m)^BUILD_TESTING:BOOL={testing}$", preset)
            self.assertRegex(settings, rf"(?m)^set\(KD_CONFORMANCE_DEVICE {device}\)$", preset)
            self.assertEqual(os.path.exists(os.path.join(build, "tests", "CTestTestfile.cmake")), testing == "ON",
                             preset)


if __name__ == "__main__":
    unittest.main()
