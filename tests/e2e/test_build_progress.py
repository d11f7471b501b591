"""scripts/build on screen: ninja's [n/N] progress instead of minutes of silence (the whole output
stays in build/build.log); a build with nothing to do says nothing."""
import os
import subprocess
import unittest

FILTER = os.path.join(os.environ["KD_SOURCE_DIR"], "scripts", "lib", "build-progress")
NINJA = ("[1/3] Building CXX object CMakeFiles/kd_core.dir/reporters/report_builder.cpp.o\n"
         "../reporters/report_builder.cpp:12: warning: unused variable\n"
         "[2/3] Building CXX object CMakeFiles/kd_core.dir/verdict/hints.cpp.o\n"
         "[3/3] Linking CXX executable kernodeck-diagnostic\n")


def shown(build_output, *mode):
    # Bytes: text mode would read the terminal's \r as a new line.
    run = subprocess.run([FILTER, *mode], input=build_output.encode(), capture_output=True, timeout=10)
    assert run.returncode == 0 and run.stdout == b"", run
    return run.stderr.decode()  # what the user sees: scripts/build's messages go to stderr


class BuildProgress(unittest.TestCase):
    def test_a_log_gets_one_plain_line_per_step(self):
        self.assertEqual(shown(NINJA, "plain"), "kernodeck: building [1/3] report_builder.cpp.o\n"
                                                "kernodeck: building [2/3] hints.cpp.o\n"
                                                "kernodeck: building [3/3] kernodeck-diagnostic\n")

    def test_a_terminal_gets_one_line_rewritten_in_place(self):
        screen = shown(NINJA, "tty")
        self.assertEqual(screen.count("\n"), 1, repr(screen))  # one line, ended once the build is done
        self.assertTrue(screen.endswith("kernodeck: building [3/3] kernodeck-diagnostic\033[K\n"), repr(screen))
        self.assertEqual(screen.count("\r"), 3, repr(screen))
        self.assertNotIn("warning", screen)  # the compiler's output stays in build.log

    def test_nothing_to_do_says_nothing(self):
        for mode in ("plain", "tty"):
            self.assertEqual(shown("ninja: no work to do.\n", mode), "")


if __name__ == "__main__":
    unittest.main()
