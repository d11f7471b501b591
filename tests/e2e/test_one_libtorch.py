"""One LibTorch per build, on a machine that has two: Debian's libtorch-dev and a pip LibTorch.

Configuring against the pip one with Torch_DIR once took Debian's Caffe2 config and built the probe without its
GPU code, silently. Where the machine lacks one of the two there is nothing to mix: the test skips, and the module
with it (run_module.py: a CTest skip)."""
import glob
import os
import shutil
import subprocess
import tempfile
import unittest

SOURCE = os.environ["KD_SOURCE_DIR"]
CMAKE = os.environ.get("KD_CMAKE", "cmake")


def pip_torch():
    """The private pinned torch of scripts/setup, if this checkout has one."""
    for config in glob.glob(os.path.join(SOURCE, ".deps/torch-venv/lib/python3*/site-packages/torch/share/cmake/Torch")):
        return config
    return None


DEBIAN = next(iter(glob.glob("/usr/lib/*/cmake/Torch/TorchConfig.cmake")), None)
PIP = pip_torch()


@unittest.skipUnless(DEBIAN and PIP, f"needs Debian's libtorch-dev ({DEBIAN or 'absent'}) and the private pip LibTorch "
                     f"({PIP or 'absent'}) together")
class OneLibTorch(unittest.TestCase):
    def test_a_pip_libtorch_chosen_by_torch_dir_takes_nothing_from_debians(self):
        build = tempfile.mkdtemp(prefix="kd-one-libtorch-")
        self.addCleanup(shutil.rmtree, build, True)
        proc = subprocess.run([CMAKE, "-S", SOURCE, "-B", build, "-G", "Ninja", "-DBUILD_TESTING=OFF",
                               "-DCMAKE_POLICY_VERSION_MINIMUM=3.5", f"-DTorch_DIR={PIP}"],
                              capture_output=True, text=True, timeout=500)
        self.assertEqual(proc.returncode, 0, proc.stdout[-3000:] + proc.stderr[-3000:])
        cache = open(os.path.join(build, "CMakeCache.txt")).read()
        caffe2 = [l.split("=", 1)[1] for l in cache.splitlines() if l.startswith("Caffe2_DIR:")]
        self.assertEqual(caffe2, [os.path.join(os.path.dirname(PIP), "Caffe2")])
        torch_root = os.path.dirname(os.path.dirname(os.path.dirname(PIP)))
        if os.path.exists(os.path.join(torch_root, "lib", "libtorch_cuda.so")):
            self.assertIn("GPU code: probe_cuda.cpp", proc.stdout)  # the CUDA LibTorch keeps its GPU code
        for line in cache.splitlines():
            if line.startswith(("c10_LIBRARY:", "TORCH_LIBRARY:", "torch_cpu_LIBRARY:")):
                self.assertIn(torch_root, line)

    def test_a_build_folder_switched_to_another_libtorch_takes_the_new_one(self):
        # scripts/setup's choice changes (KD_LIBTORCH=debian, then private): the Torch_DIR that the first configure
        # left in the cache must not keep the build on the first LibTorch while setup names the second.
        build = tempfile.mkdtemp(prefix="kd-one-libtorch-")
        self.addCleanup(shutil.rmtree, build, True)
        env = dict(os.environ, KD_BUILD_DIR=build, KD_NO_INSTALL="1")
        for choice, config in (("debian", os.path.dirname(DEBIAN)), ("private", PIP)):
            setup = subprocess.run([os.path.join(SOURCE, "scripts/setup")], env=dict(env, KD_LIBTORCH=choice),
                                   capture_output=True, text=True, timeout=300)
            self.assertEqual(setup.returncode, 0, setup.stderr[-3000:])
            proc = subprocess.run([CMAKE, "-S", SOURCE, "-B", build, "-G", "Ninja", "-DBUILD_TESTING=OFF",
                                   "-C", os.path.join(build, "kd-libtorch.cmake")],
                                  capture_output=True, text=True, timeout=500)
            self.assertEqual(proc.returncode, 0, proc.stdout[-3000:] + proc.stderr[-3000:])
            cache = open(os.path.join(build, "CMakeCache.txt")).read().splitlines()
            torch_dir = [l.split("=", 1)[1] for l in cache if l.startswith("Torch_DIR:")]
            self.assertEqual([os.path.realpath(d) for d in torch_dir], [os.path.realpath(config)], choice)
            self.assertIn(f'KD_TORCH_SOURCE:STRING={choice}', cache)


if __name__ == "__main__":
    unittest.main()
