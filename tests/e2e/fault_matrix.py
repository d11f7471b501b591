"""Runs every row of the fault matrix (scenarios.py) on the build it needs and prints the table.
Usage: fault_matrix.py OUT_DIR BUILD_INFO.json...  (scripts/fault-matrix makes the builds).

A row whose build or situation cannot be made here is SKIPPED, which fails the matrix unless
KD_MATRIX_ALLOW_SKIP=1: a skip is never a pass. A row for another kind of machine (GPU or not)
is "skipped" with its reason: both count as skipped in the closing line "Rows: N passed, N failed, N skipped
(the reasons)", also written to $KD_TEST_COUNTS when set (scripts/test adds it to its totals).
Writes OUT_DIR/table.md and OUT_DIR/log.txt (the output of every row that failed)."""
import os
import sys
import time
import traceback
import unittest

out_dir, infos = sys.argv[1], sys.argv[2:]
os.environ["KD_BUILD_INFO"] = infos[0]  # kd.py reads the schema path from a build
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from kd import VALIDATED, Build, DiagnosticTest, gpu_count, machine_has_gpu  # noqa: E402
from scenarios import ROWS  # noqa: E402


class Runner(DiagnosticTest):
    def runTest(self):
        pass


def first_build_per_kind(paths):
    builds = {}
    for path in paths:
        b = Build(path)
        builds.setdefault(b.kind, b)
    return builds


def run_row(row, builds, has_gpu):
    """(status, build, got, seconds, detail): status is ok, MISMATCH, FAIL, SKIP (could not run here) or skipped
    (a row for another kind of machine); the detail of a skip is its reason."""
    if row.machine == "gpu" and not has_gpu or row.machine == "no-gpu" and has_gpu:
        return "skipped", None, None, 0, f"needs {'a GPU' if row.machine == 'gpu' else 'a machine without a GPU'}"
    build = next((builds[k] for k in row.builds if k in builds), None)
    if build is None:
        return "SKIP", None, None, 0, f"no {' or '.join(row.builds)} build could be made here"
    t = Runner()
    start = time.monotonic()
    try:
        t.setUp()
        r = row.fn(t, build)
        got = r.got()
        mismatch = row.mismatch(got)
        detail = f"{mismatch}\nstdout:\n{r.stdout[-4000:]}\nstderr:\n{r.stderr[-3000:]}" if mismatch else \
            getattr(r, "note", "")
        return ("MISMATCH" if mismatch else "ok"), build, got, time.monotonic() - start, detail
    except unittest.SkipTest as e:
        return "SKIP", build, None, time.monotonic() - start, str(e)
    except Exception:  # an assertion of the row (a file changed, a limit missed) or a broken row
        return "FAIL", build, None, time.monotonic() - start, traceback.format_exc(limit=-3)
    finally:
        t.doCleanups()


def main():
    os.makedirs(out_dir, exist_ok=True)
    builds = first_build_per_kind(infos)
    has_gpu = machine_has_gpu()
    rows, log, statuses, skip_reasons = [], [], [], {}
    for row in sorted(ROWS, key=lambda r: r.exit):  # stable: rows of one code in the order written
        status, build, got, seconds, detail = run_row(row, builds, has_gpu)
        print(f"{status:8} {row.key} ({seconds:.1f} s)", flush=True)
        got_text = "-" if got is None else f"{got[0]}/{got[1]}/{got[2] or '-'}"
        skipped = status in ("SKIP", "skipped")
        if skipped:
            skip_reasons[detail] = skip_reasons.get(detail, 0) + 1
        rows.append(f"| {row.exit} | {row.cause} | {build.kind if build else '-'} | {row.expected()} | {got_text} "
                    f"| {seconds:.1f} | {f'{status}: {detail}' if skipped else status} |")
        statuses.append(status)
        if detail and status != "skipped":
            log.append(f"== {row.key}: {status}\n{detail}\n")
    counts = {s: statuses.count(s) for s in ("ok", "MISMATCH", "FAIL", "SKIP", "skipped")}
    machine = f"{gpu_count()} GPU(s)" if has_gpu else "no GPU"
    header = [f"Fault matrix, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {machine}; builds: "
              + "; ".join(b.describe() for b in builds.values()),
              f"Reports validated against the schema: {VALIDATED['reports']}"
              + (f", NOT validated (no python3-jsonschema): {VALIDATED['unvalidated']}" if VALIDATED["unvalidated"] else ""),
              "", "| exit | scenario | build | expected code/exit/stage | got | s | result |",
              "|---|---|---|---|---|---|---|"]
    failed = counts["MISMATCH"] + counts["FAIL"]
    closing = f"{counts['ok']} passed, {failed} failed, {counts['SKIP'] + counts['skipped']} skipped"
    reasons = "; ".join(f"{why}: {n}" for why, n in skip_reasons.items())
    table = "\n".join(header + rows + ["", f"Rows: {closing}" + (f" ({reasons})" if reasons else "")]) + "\n"
    with open(os.path.join(out_dir, "table.md"), "w") as f:
        f.write(table)
    with open(os.path.join(out_dir, "log.txt"), "w") as f:
        f.write("\n".join(log) or "every row matched\n")
    print("\n" + table, end="")
    if os.environ.get("KD_TEST_COUNTS"):
        os.makedirs(os.environ["KD_TEST_COUNTS"], exist_ok=True)
        with open(os.path.join(os.environ["KD_TEST_COUNTS"], "matrix.txt"), "w") as f:
            f.write(f"matrix fault-matrix: {closing}\n")
    skipped = counts["SKIP"] if os.environ.get("KD_MATRIX_ALLOW_SKIP") != "1" else 0
    if failed or skipped:
        print(f"fault matrix FAILED: {failed} row(s) did not match, {skipped} skipped (details: {out_dir}/log.txt)")
    return 1 if failed or skipped else 0


sys.exit(main())
