"""Runs one e2e module as its CTest test (tests/CMakeLists.txt): unittest's verbose output, then the plain closing
line "N passed, N failed, N skipped" (a test counts once: failed if any part of it failed, skipped if it skipped).
Exit 0, 1 if any test failed or none ran, 77 (the tests' SKIP_RETURN_CODE) if every test skipped: CTest then shows
the module as skipped, never as passed. With KD_TEST_COUNTS set, the line is also written to that folder, where
scripts/test adds up every module's counts, followed by each skipped test and its reason.
Usage: run_module.py MODULE"""
import os
import sys
import unittest

SKIPPED_ALL = 77


class CountingResult(unittest.TextTestResult):
    """Each test's outcome by its id; a subtest's outcome is its test's."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.outcomes = {}

    def note(self, test, outcome):
        test_id = getattr(test, "test_case", test).id()  # a subtest belongs to its test
        rank = ("passed", "skipped", "failed")
        if rank.index(outcome) >= rank.index(self.outcomes.get(test_id, "passed")):
            self.outcomes[test_id] = outcome

    def addSuccess(self, test):
        super().addSuccess(test)
        self.note(test, "passed")

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self.note(test, "passed")

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self.note(test, "skipped")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self.note(test, "failed")

    def addError(self, test, err):  # also a setUpClass or setUpModule that failed (an _ErrorHolder)
        super().addError(test, err)
        self.note(test, "failed")

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self.note(test, "failed")

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            self.note(subtest, "failed")

    def counts(self):
        values = list(self.outcomes.values())
        return {k: values.count(k) for k in ("passed", "failed", "skipped")}


def closing_line(counts):
    return f"{counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped"


def exit_code(counts):
    if counts["failed"] or not sum(counts.values()):
        return 1
    return SKIPPED_ALL if counts["skipped"] == sum(counts.values()) else 0


def main(module):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    suite = unittest.defaultTestLoader.loadTestsFromName(module)
    result = unittest.TextTestRunner(stream=sys.stdout, verbosity=2, resultclass=CountingResult).run(suite)
    counts = result.counts()
    line = closing_line(counts)
    print(line, flush=True)
    folder = os.environ.get("KD_TEST_COUNTS")
    if folder:
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"e2e.{module}.txt"), "w") as f:
            f.write(f"e2e {module}: {line}\n")
            f.writelines(f"  skipped {test.id().split('.', 1)[-1]}: {why}\n" for test, why in result.skipped)
    return exit_code(counts)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
