"""Time to verdict, side by side in one run (scripts/bench): A the diagnostic, B the minimal LibTorch
program, C the same check in Python; alternating A B C ..., warm-up first, ratios per round.

Each run is measured twice over, because the diagnostic is a tree of processes and B and C are one:
- time to the verdict (the measured process' exit: the diagnostic's supervisor gives its verdict without
  waiting for its worker's teardown) and time to the end (every process it started has ended);
- peak memory as the largest single process' ru_maxrss, and as the whole tree's RSS added up at its peak
  (sampled from /proc every few milliseconds: a shorter peak can be missed; shared pages count once per process).
--device cpu runs the CPU comparison only (no GPU needed)."""
import argparse
import ctypes
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time


PR_SET_CHILD_SUBREAPER = 36
PAGE = os.sysconf("SC_PAGE_SIZE")
MIB = 1 << 20


def become_subreaper():
    """The diagnostic gives its verdict without waiting for its worker's teardown (contract/event_types.h): a
    worker still ending then comes to this process, which waits for it before the next run and counts its memory."""
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit(f"prctl(PR_SET_CHILD_SUBREAPER): {os.strerror(ctypes.get_errno())}")


def descendants(pid):
    """Every process below PID now, through each of its threads' children (orphans come to this subreaper)."""
    found, stack = [], [pid]
    while stack:
        p = stack.pop()
        try:
            tasks = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{p}/task/{task}/children") as f:
                    kids = [int(k) for k in f.read().split()]
            except OSError:
                continue
            found += kids
            stack += kids
    return found


def rss_bytes(pid):
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * PAGE
    except (OSError, IndexError, ValueError):  # ended between the listing and the read
        return 0


class TreeSampler(threading.Thread):
    """The largest sum of the RSS of this process' descendants, sampled every INTERVAL seconds until stopped."""

    def __init__(self, interval=0.005):
        super().__init__(daemon=True)
        self.interval, self.peak, self.samples = interval, 0, 0
        self.done = threading.Event()

    def run(self):
        me = os.getpid()
        while not self.done.is_set():
            self.peak = max(self.peak, sum(rss_bytes(p) for p in descendants(me)))
            self.samples += 1
            self.done.wait(self.interval)

    def stop(self):
        self.done.set()
        self.join()
        return self.peak


def run(argv):
    """One run of ARGV: {verdict_s, end_s, largest_mib, tree_mib, exit}. verdict_s: to its exit; end_s: until every
    process it started has ended; largest_mib: the largest single process' ru_maxrss (wait4: it and those it
    waited for, then each one still ending when it exited, reaped here); tree_mib: the tree's RSS sum at its peak."""
    sampler = TreeSampler()
    sampler.start()
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    verdict_s = time.perf_counter() - start
    largest = usage.ru_maxrss  # KiB
    while True:
        try:
            _, _, left = os.wait4(-1, 0)
        except ChildProcessError:
            break
        largest = max(largest, left.ru_maxrss)
    end_s = time.perf_counter() - start
    tree = sampler.stop()
    return {"verdict_s": verdict_s, "end_s": end_s, "largest_mib": largest / 1024, "tree_mib": tree / MIB,
            "exit": os.waitstatus_to_exitcode(status)}


def series(variants, rounds, warmup):
    """variants: {name: argv_factory(round)}; returns {name: [run(), ...]} for the counted rounds."""
    out = {name: [] for name in variants}
    for r in range(warmup + rounds):
        for name, argv in variants.items():
            m = run(argv(r))
            if m["exit"] != 0:
                sys.exit(f"{name} failed with exit {m['exit']} in round {r}: {' '.join(argv(r))}")
            if r >= warmup:
                out[name].append(m)
    return out


def summary(samples):
    s = {}
    for key in ("verdict_s", "end_s", "largest_mib", "tree_mib"):
        values = [m[key] for m in samples]
        s[key] = {"median": statistics.median(values), "min": min(values), "max": max(values)}
    return s


def ratio(results, a, b, key):
    """Median of the per-round ratios a/b of one measure."""
    return statistics.median(x[key] / y[key] for x, y in zip(results[a], results[b]))


# The ratios, each named for what it measures: (name, series, a, b, measure).
RATIOS = [("gpu_verdict_A_over_B", "gpu", "A", "B", "verdict_s"), ("gpu_end_A_over_B", "gpu", "A", "B", "end_s"),
          ("gpu_verdict_A_over_C", "gpu", "A", "C", "verdict_s"), ("gpu_end_A_over_C", "gpu", "A", "C", "end_s"),
          ("gpu_largest_process_rss_A_over_B", "gpu", "A", "B", "largest_mib"),
          ("gpu_tree_rss_A_over_B", "gpu", "A", "B", "tree_mib"),
          ("cpu_verdict_A_over_B", "cpu", "A", "B", "verdict_s"), ("cpu_end_A_over_B", "cpu", "A", "B", "end_s"),
          ("cpu_largest_process_rss_A_over_B", "cpu", "A", "B", "largest_mib"),
          ("cpu_tree_rss_A_over_B", "cpu", "A", "B", "tree_mib")]
# docs/BENCHMARKS.md's targets, on what they were set for: the verdict's time, the largest process' memory.
TARGETS = [("GPU A/B to the verdict", "gpu_verdict_A_over_B", 0.85), ("GPU A/C to the verdict", "gpu_verdict_A_over_C", 0.25),
           ("GPU A/B largest process RSS", "gpu_largest_process_rss_A_over_B", 1.0),
           ("CPU A/B to the verdict", "cpu_verdict_A_over_B", 1.0)]


def measure(args):
    become_subreaper()
    tmp = tempfile.mkdtemp(prefix="kd-bench-")
    report = lambda tag: lambda r: [args.diagnostic, *tag, "--output", os.path.join(tmp, f"{'-'.join(tag) or 'gpu'}-{r}.json")]
    results = {}
    if args.device == "cuda":
        py = [sys.executable, args.python_check]
        results["gpu"] = series({"A": report([]), "B": lambda r: [args.minimal, "cuda"], "C": lambda r: py + ["cuda"]},
                                args.rounds, args.warmup)
    results["cpu"] = series({"A": report(["--device", "cpu"]), "B": lambda r: [args.minimal, "cpu"]}, args.rounds, args.warmup)
    full = ["--full"] + (["--device", "cpu"] if args.device == "cpu" else [])
    if args.full_rounds:
        results["full"] = series({"A_full": lambda r: [args.diagnostic, *full]}, args.full_rounds, 0)
    return results


def figures_of(results, args):
    figures = {mode: {k: summary(v) for k, v in runs.items()} for mode, runs in results.items()}
    figures["ratios"] = {name: ratio(results[mode], a, b, key) for name, mode, a, b, key in RATIOS if mode in results}
    figures.update(rounds=args.rounds, warmup=args.warmup, full_rounds=args.full_rounds, device=args.device)
    return figures


def print_figures(figures):
    print(f"{'variant':<12}{'to verdict s':>13}{'min':>7}{'max':>7}{'to end s':>10}{'largest MiB':>13}{'tree MiB':>10}")
    for mode in ("gpu", "cpu", "full"):
        for name, f in figures.get(mode, {}).items():
            v = f["verdict_s"]
            print(f"{mode + ' ' + name:<12}{v['median']:>13.3f}{v['min']:>7.3f}{v['max']:>7.3f}{f['end_s']['median']:>10.3f}"
                  f"{f['largest_mib']['median']:>13.0f}{f['tree_mib']['median']:>10.0f}")
    print()
    for name, value in figures["ratios"].items():
        print(f"{name:<34} {value:7.3f}")
    print()
    targets = [(label, figures["ratios"][key], limit) for label, key, limit in TARGETS if key in figures["ratios"]]
    if "full" in figures and figures["device"] == "cuda":
        targets.append(("full run to the verdict (s)", figures["full"]["A_full"]["verdict_s"]["median"], 8.0))
    for label, value, limit in targets:
        print(f"{label:<30} {value:7.3f}  target <= {limit:<5} {'met' if value <= limit else 'MISSED'}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--diagnostic", required=True)
    ap.add_argument("--minimal", required=True)
    ap.add_argument("--python-check", required=True)
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda", help="cpu: the CPU comparison only")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--full-rounds", type=int, default=3, help="runs of --full (0: none)")
    ap.add_argument("--json", help="write the figures here too")
    args = ap.parse_args()
    figures = figures_of(measure(args), args)
    print_figures(figures)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=2)


if __name__ == "__main__":
    main()
