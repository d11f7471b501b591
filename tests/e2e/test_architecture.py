"""What docs/architecture.md says of the source layout, checked on the sources: which folder may include which,
LibTorch only in probe/ (and the benchmark's minimal program), and the diagnostic's two programs made without any
plugin machinery (no ELF reading, no readelf, no generated index)."""
import os
import re
import unittest

from kd import BUILD

SOURCE = os.environ.get("KD_SOURCE_DIR", os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))

# Folder -> the folders of ours it may include (docs/architecture.md, "Folders and what they may include").
MAY_INCLUDE = {
    "verdict": {"verdict"},
    "process": {"process"},
    "contract": {"contract", "verdict"},
    "reporters": {"reporters", "contract", "verdict"},
    "fixtures": {"fixtures", "contract", "verdict", "process", "probe", "reporters"},
    "suites": {"suites", "fixtures", "contract", "verdict", "process", "probe", "machine"},
    "machine": {"machine", "contract", "verdict", "process"},
    "runner": {"runner", "suites", "fixtures", "reporters", "contract", "verdict", "process", "probe", "machine"},
}
OURS = set(MAY_INCLUDE) | {"probe", "tests", "bench"}


def sources(folder):
    for root, _, files in os.walk(os.path.join(SOURCE, folder)):
        for name in files:
            if name.endswith((".h", ".cpp")):
                path = os.path.join(root, name)
                with open(path, encoding="utf-8") as f:
                    yield os.path.relpath(path, SOURCE), f.read()


class Architecture(unittest.TestCase):
    def test_each_folder_includes_only_what_the_architecture_page_allows(self):
        for folder, allowed in MAY_INCLUDE.items():
            for path, text in sources(folder):
                for included in re.findall(r'#include "([a-z_]+)/', text):
                    if included in OURS:
                        self.assertIn(included, allowed, f"{path} includes {included}/")

    def test_the_probe_includes_of_ours_only_the_memory_headroom(self):
        for path, text in sources("probe"):
            for included in re.findall(r'#include "([a-z_]+/[a-z_]+\.h)"', text):
                if included.split("/")[0] in OURS - {"probe"}:
                    self.assertEqual(included, "machine/memory_headroom.h", path)

    def test_libtorch_only_in_the_probe(self):
        for folder in MAY_INCLUDE:
            for path, text in sources(folder):
                self.assertIsNone(re.search(r"#include <(torch|ATen|c10|caffe2)/", text), path)

    def test_no_plugin_machinery(self):
        for folder in list(MAY_INCLUDE) + ["probe"]:
            for path, text in sources(folder):
                self.assertNotIn("<elf.h>", text, path)  # no ELF reading
        for path in ("CMakeLists.txt", "probe/CMakeLists.txt"):
            with open(os.path.join(SOURCE, path)) as f:
                text = f.read()
            self.assertNotIn("readelf", text, path)
            self.assertNotIn("--whole-archive", text, path)
            self.assertNotIn("ENABLE_EXPORTS", text, path)
        self.assertFalse(os.path.exists(os.path.join(SOURCE, "cmake", "HeavyIndex.cmake")))

    def test_the_layers_are_one_list(self):
        # The steps are functions named in suites/layers.cpp; nothing registers itself from a static initialiser.
        for path, text in sources("suites"):
            self.assertNotRegex(text, r"\bstatic const bool\b", path)
        with open(os.path.join(SOURCE, "suites", "layers.cpp")) as f:
            listed = set(re.findall(r"(?:&|IN_FULL\()(l[1-8]_[a-z0-9_]+)", f.read()))
        with open(os.path.join(SOURCE, "suites", "steps.h")) as f:
            declared = set(re.findall(r"\b(l[1-8]_[a-z0-9_]+)\(", f.read()))
        self.assertEqual(listed, declared)

    def test_both_programs_are_built_side_by_side(self):
        self.assertTrue(os.access(BUILD.bin, os.X_OK))
        self.assertTrue(os.access(BUILD.full_program, os.X_OK))


if __name__ == "__main__":
    unittest.main()
