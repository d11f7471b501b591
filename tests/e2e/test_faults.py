"""The fault matrix's rows (scenarios.py) that this build and this machine can show; a row for
another build or machine is a visible skip here and runs in scripts/fault-matrix."""
import unittest

from kd import BUILD, DiagnosticTest, machine_has_gpu
from scenarios import ROWS


class FaultMatrix(DiagnosticTest):
    pass


def make_test(row):
    def test(self):
        why = row.not_here(BUILD, machine_has_gpu())
        if why:
            self.skipTest(why)
        r = row.fn(self, BUILD)
        mismatch = row.mismatch(r.got())
        self.assertIsNone(mismatch, f"{row.cause}: {mismatch}\nstdout:\n{r.stdout[-3000:]}\nstderr:\n{r.stderr[-2000:]}")
    test.__doc__ = f"{row.expected()}: {row.cause}"
    return test


for _row in ROWS:
    setattr(FaultMatrix, f"test_{_row.key}", make_test(_row))


if __name__ == "__main__":
    unittest.main()
