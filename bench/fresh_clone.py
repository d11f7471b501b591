"""Time to the first verdict from a fresh clone (scripts/bench --fresh-clone), side by side in one run with
the minimal LibTorch program's own configure + build + run. LibTorch is already present (the clone uses
this checkout's .deps and its choice of LibTorch); the compiler cache is off, as on a fresh machine.

  A  in a fresh clone: scripts/setup, then scripts/run (configure, build what the run needs, the default run)
  B  bench/minimal/: cmake configure, build, run (one source file against the same LibTorch)

Phases of A: setup, configure (what is left of scripts/run's time), build (ninja's log), run (scripts/run
again, nothing left to build). Target: A's first verdict <= 3x B's (stretch 2x). Then, apart from A: the first
run of L4, which builds kernodeck-diagnostic-full and the probe's heavy part (the plain run must not have built them).
--rounds N: N fresh clones, each A then B, alternated; the figures are the medians (a round's phases are one run's)."""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

TARGET, STRETCH = 3.0, 2.0


def timed(argv, env, cwd=None, ok=(0,)):
    start = time.perf_counter()
    proc = subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode not in ok:
        sys.exit(f"{' '.join(argv)} failed with exit {proc.returncode}:\n{proc.stdout[-3000:]}")
    return seconds


def ninja_build(build_dir, skip=0):
    """The build's wall time and steps from .ninja_log (start and end ms of each step), the heaviest three;
    skip: the steps of earlier builds, which the log lists first."""
    steps = []
    with open(os.path.join(build_dir, ".ninja_log")) as f:
        for line in f:
            if line.startswith("#"):
                continue
            start, end, _, target, _ = line.rstrip("\n").split("\t")
            steps.append((int(start), int(end), target))
    steps = steps[skip:]
    wall = (max(e for _, e, _ in steps) - min(s for s, _, _ in steps)) / 1000
    heaviest = sorted(steps, key=lambda s: s[0] - s[1])[:3]
    return wall, len(steps), [(os.path.basename(t), (e - s) / 1000) for s, e, t in heaviest]


def torch_source(build_dir):
    """How scripts/setup chose LibTorch for BUILD_DIR (KD_TORCH_SOURCE in its kd-libtorch.cmake), or None."""
    try:
        with open(os.path.join(build_dir, "kd-libtorch.cmake")) as f:
            m = re.search(r'set\(KD_TORCH_SOURCE "([a-z]+)"', f.read())
    except OSError:
        return None
    return m.group(1) if m else None


def a_round(root, tmp, env, chosen, device, n):
    """Round n's A: a fresh clone's setup, first verdict and second run, then its first run of L4."""
    clone = os.path.join(tmp, f"clone-{n}")
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", root, clone], check=True)
    os.symlink(os.path.join(root, ".deps"), os.path.join(clone, ".deps"))  # LibTorch already present
    verdict = ["--device", "cpu"] if device == "cpu" else []
    # A verdict other than a pass is still a verdict (e.g. 6 where the GPU is hidden): the time is what counts.
    codes = tuple(range(0, 20))
    setup = timed([os.path.join(clone, "scripts/setup")], env)
    if torch_source(os.path.join(clone, "build")) != chosen:
        sys.exit(f"the clone chose LibTorch '{torch_source(os.path.join(clone, 'build'))}', this checkout '{chosen}'")
    first = timed([os.path.join(clone, "scripts/run"), *verdict], env, ok=codes)
    build, steps, heaviest = ninja_build(os.path.join(clone, "build"))
    run = timed([os.path.join(clone, "scripts/run"), *verdict], env, ok=codes)
    # The first verdict must not have waited for L4-L8's parts; a first run of L4 builds them.
    heavy = [os.path.join(clone, "build", lib) for lib in ("libkd_probe_heavy.so", "kernodeck-diagnostic-full")]
    if any(os.path.exists(lib) for lib in heavy):
        sys.exit("scripts/run built a part of L4-L8 for a plain run")
    later = timed([os.path.join(clone, "scripts/run"), "--device", "cpu", "--layers", "L1,L4"], env)
    if not all(os.path.exists(lib) for lib in heavy):
        sys.exit("scripts/run --layers L1,L4 did not build L4-L8's parts")
    _, later_steps, later_heaviest = ninja_build(os.path.join(clone, "build"), skip=steps)
    a = {"total_s": setup + first, "setup_s": setup, "configure_s": max(first - build - run, 0.0), "build_s": build,
         "build_steps": steps, "heaviest": heaviest, "run_s": run}
    return a, {"total_s": later, "heavy_build_steps": later_steps, "heaviest": later_heaviest}, clone


def b_round(clone, tmp, env, device, n):
    """Round n's B: the minimal program's configure, build and run in a new folder."""
    minimal = os.path.join(tmp, f"minimal-{n}")
    configure = timed(["cmake", "-S", os.path.join(clone, "bench/minimal"), "-B", minimal, "-G", "Ninja",
                       "-DCMAKE_BUILD_TYPE=Release", "-C", os.path.join(clone, "build/kd-libtorch.cmake")], env)
    build = timed(["cmake", "--build", minimal], env)
    run = timed([os.path.join(minimal, "kd_minimal_check"), device], env)
    return {"total_s": configure + build + run, "configure_s": configure, "build_s": build, "run_s": run}


def median_of(rows):
    """The row whose total is the median (the lower middle of an even count): its phases stay one run's."""
    return sorted(rows, key=lambda r: r["total_s"])[(len(rows) - 1) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True, help="this checkout (its .deps holds LibTorch)")
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    ap.add_argument("--rounds", type=int, default=1,
                    help="fresh clones, each A then B; the ratio is of the medians (a busy machine's one pair varies)")
    ap.add_argument("--json", help="write the figures here too")
    args = ap.parse_args()
    if args.rounds < 1:
        sys.exit("--rounds must be 1 or more")
    env = {**os.environ, "CCACHE_DISABLE": "1", "KD_NO_INSTALL": "1"}
    env.pop("KD_BUILD_DIR", None)
    # The clone's setup would choose again, and its first choice is not always this checkout's: with Debian's
    # libtorch-dev installed it takes that (1.13, CPU only) over the private pip LibTorch. Name it.
    chosen = torch_source(os.path.join(args.root, "build"))
    if chosen in ("private", "debian"):
        env["KD_LIBTORCH"] = chosen
    rounds = []
    for n in range(1, args.rounds + 1):
        tmp = tempfile.mkdtemp(prefix="kd-fresh-")
        try:
            a, later, clone = a_round(args.root, tmp, env, chosen, args.device, n)
            b = b_round(clone, tmp, env, args.device, n)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        rounds.append({"A": a, "B": b, "later_L4": later, "ratio_A_over_B": a["total_s"] / b["total_s"]})

    A, B, L = (median_of([r[k] for r in rounds]) for k in ("A", "B", "later_L4"))
    figures = {"device": args.device, "libtorch": chosen, "A": A, "later_L4": L, "B": B,
               "ratio_A_over_B": A["total_s"] / B["total_s"], "target": TARGET, "stretch": STRETCH, "rounds": rounds}
    many = len(rounds) > 1
    print(f"first verdict from a fresh clone ({args.device}; LibTorch present ({chosen}), no compiler cache)"
          + (f", {len(rounds)} rounds, each A then B" if many else ""))
    if many:
        for n, r in enumerate(rounds, 1):
            print(f"  round {n}: A {r['A']['total_s']:.1f} s (build {r['A']['build_s']:.1f}), B {r['B']['total_s']:.1f} s,"
                  f" A/B {r['ratio_A_over_B']:.2f}; the first run of L4 {r['later_L4']['total_s']:.1f} s")
    median = "median " if many else ""
    print(f"  A suite:   {median}{A['total_s']:7.1f} s  = setup {A['setup_s']:.1f} + configure {A['configure_s']:.1f}"
          f" + build {A['build_s']:.1f} ({A['build_steps']} steps) + run {A['run_s']:.1f}")
    print("             heaviest steps: " + ", ".join(f"{t} {s:.1f} s" for t, s in A["heaviest"]))
    print(f"  B minimal: {median}{B['total_s']:7.1f} s  = configure {B['configure_s']:.1f} + build {B['build_s']:.1f}"
          f" + run {B['run_s']:.1f}")
    print(f"  later, the first run of L4 (scripts/run --device cpu --layers L1,L4): {median}{L['total_s']:.1f} s, building the"
          f" L4-L8's parts ({L['heavy_build_steps']} steps: " + ", ".join(f"{t} {s:.1f} s" for t, s in L["heaviest"]) + ")")
    ratio = figures["ratio_A_over_B"]
    print(f"fresh clone A/B{' (medians)' if many else ''}   {ratio:7.2f}  target <= {TARGET} {'met' if ratio <= TARGET else 'MISSED'}"
          f" (stretch {STRETCH}: {'met' if ratio <= STRETCH else 'missed'})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=2)


if __name__ == "__main__":
    main()
