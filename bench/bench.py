"""Time to verdict, side by side in one run (scripts/bench): A the diagnostic, B the minimal LibTorch
program, C the same check in Python; alternating A B C ..., warm-up first, ratios per round."""
import argparse
import ctypes
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


PR_SET_CHILD_SUBREAPER = 36


def become_subreaper():
    """The diagnostic gives its verdict without waiting for its worker's teardown (contract/event_types.h): a
    worker still ending then comes to this process, which waits for it before the next run and counts its memory."""
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit(f"prctl(PR_SET_CHILD_SUBREAPER): {os.strerror(ctypes.get_errno())}")


def run(argv):
    """Wall seconds to the process' exit, and the peak RSS (MiB) of it and of every process it started: those it
    waited for (wait4 merges them) and those still ending when it exited (reaped here, as the subreaper)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    rss = usage.ru_maxrss
    while True:
        try:
            _, _, left = os.wait4(-1, 0)
        except ChildProcessError:
            break
        rss = max(rss, left.ru_maxrss)
    return seconds, rss / 1024, code


def series(variants, rounds, warmup):
    """variants: {name: argv_factory(round)}; returns {name: [(s, rss, code), ...]} for counted rounds."""
    out = {name: [] for name in variants}
    for r in range(warmup + rounds):
        for name, argv in variants.items():
            s, rss, code = run(argv(r))
            if code != 0:
                sys.exit(f"{name} failed with exit {code} in round {r}: {' '.join(argv(r))}")
            if r >= warmup:
                out[name].append((s, rss))
    return out


def summary(samples):
    times = [s for s, _ in samples]
    rss = [m for _, m in samples]
    return {"median_s": statistics.median(times), "min_s": min(times), "max_s": max(times),
            "median_rss_mib": statistics.median(rss), "max_rss_mib": max(rss)}


def ratio(results, a, b, index=0):
    """Median of the per-round ratios a/b (index 0: wall time, 1: peak RSS)."""
    return statistics.median(x[index] / y[index] for x, y in zip(results[a], results[b]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--diagnostic", required=True)
    ap.add_argument("--minimal", required=True)
    ap.add_argument("--python-check", required=True)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--json", help="write the figures here too")
    args = ap.parse_args()
    become_subreaper()
    tmp = tempfile.mkdtemp(prefix="kd-bench-")
    report = lambda tag: lambda r: [args.diagnostic, *tag, "--output", os.path.join(tmp, f"{'-'.join(tag) or 'gpu'}-{r}.json")]
    py = [sys.executable, args.python_check]

    gpu = series({"A": report([]), "B": lambda r: [args.minimal, "cuda"], "C": lambda r: py + ["cuda"]},
                 args.rounds, args.warmup)
    cpu = series({"A": report(["--device", "cpu"]), "B": lambda r: [args.minimal, "cpu"]}, args.rounds, args.warmup)
    full = series({"A_full": lambda r: [args.diagnostic, "--full"]}, 3, 0)  # every layer this build has

    figures = {
        "gpu": {k: summary(v) for k, v in gpu.items()},
        "cpu": {k: summary(v) for k, v in cpu.items()},
        "full": summary(full["A_full"]),
        "ratios": {"gpu_A_over_B": ratio(gpu, "A", "B"), "gpu_A_over_C": ratio(gpu, "A", "C"),
                   "gpu_rss_A_over_B": ratio(gpu, "A", "B", 1), "cpu_A_over_B": ratio(cpu, "A", "B")},
        "rounds": args.rounds, "warmup": args.warmup,
    }
    # The targets of docs/BENCHMARKS.md: the verdict faster than the minimal program that does less.
    targets = [("GPU A/B wall", figures["ratios"]["gpu_A_over_B"], 0.85), ("GPU A/C wall", figures["ratios"]["gpu_A_over_C"], 0.25),
               ("GPU A/B peak RSS", figures["ratios"]["gpu_rss_A_over_B"], 1.0), ("CPU A/B wall", figures["ratios"]["cpu_A_over_B"], 1.0),
               ("full run (s)", figures["full"]["median_s"], 8.0)]
    print(f"{'variant':<12}{'median s':>10}{'min s':>8}{'max s':>8}{'RSS MiB':>10}")
    for mode in ("gpu", "cpu"):
        for name, f in figures[mode].items():
            print(f"{mode + ' ' + name:<12}{f['median_s']:>10.3f}{f['min_s']:>8.3f}{f['max_s']:>8.3f}{f['median_rss_mib']:>10.0f}")
    print(f"{'full A':<12}{figures['full']['median_s']:>10.3f}{figures['full']['min_s']:>8.3f}{figures['full']['max_s']:>8.3f}"
          f"{figures['full']['median_rss_mib']:>10.0f}")
    print()
    for name, value, limit in targets:
        print(f"{name:<18} {value:7.3f}  target <= {limit:<5} {'met' if value <= limit else 'MISSED'}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=2)


if __name__ == "__main__":
    main()
