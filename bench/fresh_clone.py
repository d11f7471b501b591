"""Time to the first verdict from a fresh clone (scripts/bench --fresh-clone), side by side in one run with
the minimal LibTorch program's own configure + build + run. LibTorch is already present (the clone uses
this checkout's .deps and its choice of LibTorch); the compiler cache is off, as on a fresh machine.

  A  in a fresh clone: scripts/setup, then scripts/run (configure, build what the run needs, the default run)
  B  bench/minimal/: cmake configure, build, run (one source file against the same LibTorch)

Phases of A: setup, configure (what is left of scripts/run's time), build (ninja's log), run (scripts/run
again, nothing left to build). Target: A's first verdict <= 3x B's (stretch 2x). Then, apart from A: the first
run of L4, which builds kernodeck-diagnostic-full and the probe's heavy part (the plain run must not have built them)."""
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True, help="this checkout (its .deps holds LibTorch)")
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    ap.add_argument("--json", help="write the figures here too")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="kd-fresh-")
    try:
        env = {**os.environ, "CCACHE_DISABLE": "1", "KD_NO_INSTALL": "1"}
        env.pop("KD_BUILD_DIR", None)
        clone = os.path.join(tmp, "clone")
        subprocess.run(["git", "clone", "-q", "--no-hardlinks", args.root, clone], check=True)
        os.symlink(os.path.join(args.root, ".deps"), os.path.join(clone, ".deps"))  # LibTorch already present
        # The clone's setup would choose again, and its first choice is not always this checkout's: with Debian's
        # libtorch-dev installed it takes that (1.13, CPU only) over the private pip LibTorch. Name it.
        chosen = torch_source(os.path.join(args.root, "build"))
        if chosen in ("private", "debian"):
            env["KD_LIBTORCH"] = chosen
        verdict = ["--device", "cpu"] if args.device == "cpu" else []
        # A verdict other than a pass is still a verdict (e.g. 6 where the GPU is hidden): the time is what counts.
        codes = tuple(range(0, 20))
        setup = timed([os.path.join(clone, "scripts/setup")], env)
        if torch_source(os.path.join(clone, "build")) != chosen:
            sys.exit(f"the clone chose LibTorch '{torch_source(os.path.join(clone, 'build'))}', this checkout '{chosen}'")
        first = timed([os.path.join(clone, "scripts/run"), *verdict], env, ok=codes)
        build, steps, heaviest = ninja_build(os.path.join(clone, "build"))
        run = timed([os.path.join(clone, "scripts/run"), *verdict], env, ok=codes)
        a = setup + first
        # The first verdict must not have waited for L4-L8's parts; a first run of L4 builds them.
        heavy = [os.path.join(clone, "build", lib) for lib in ("libkd_probe_heavy.so", "kernodeck-diagnostic-full")]
        if any(os.path.exists(lib) for lib in heavy):
            sys.exit("scripts/run built a part of L4-L8 for a plain run")
        log_steps = steps
        later = timed([os.path.join(clone, "scripts/run"), "--device", "cpu", "--layers", "L1,L4"], env)
        if not all(os.path.exists(lib) for lib in heavy):
            sys.exit("scripts/run --layers L1,L4 did not build L4-L8's parts")
        _, later_steps, later_heaviest = ninja_build(os.path.join(clone, "build"), skip=log_steps)

        minimal = os.path.join(tmp, "minimal")
        m_configure = timed(["cmake", "-S", os.path.join(clone, "bench/minimal"), "-B", minimal, "-G", "Ninja",
                             "-DCMAKE_BUILD_TYPE=Release", "-C", os.path.join(clone, "build/kd-libtorch.cmake")], env)
        m_build = timed(["cmake", "--build", minimal], env)
        m_run = timed([os.path.join(minimal, "kd_minimal_check"), args.device], env)
        b = m_configure + m_build + m_run
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    figures = {
        "device": args.device, "libtorch": chosen,
        "A": {"total_s": a, "setup_s": setup, "configure_s": max(first - build - run, 0.0), "build_s": build,
              "build_steps": steps, "heaviest": heaviest, "run_s": run},
        "later_L4": {"total_s": later, "heavy_build_steps": later_steps, "heaviest": later_heaviest},
        "B": {"total_s": b, "configure_s": m_configure, "build_s": m_build, "run_s": m_run},
        "ratio_A_over_B": a / b, "target": TARGET, "stretch": STRETCH,
    }
    A, B = figures["A"], figures["B"]
    print(f"first verdict from a fresh clone ({args.device}; LibTorch present ({chosen}), no compiler cache)")
    print(f"  A suite:   {A['total_s']:7.1f} s  = setup {A['setup_s']:.1f} + configure {A['configure_s']:.1f}"
          f" + build {A['build_s']:.1f} ({steps} steps) + run {A['run_s']:.1f}")
    print("             heaviest steps: " + ", ".join(f"{t} {s:.1f} s" for t, s in heaviest))
    print(f"  B minimal: {B['total_s']:7.1f} s  = configure {B['configure_s']:.1f} + build {B['build_s']:.1f}"
          f" + run {B['run_s']:.1f}")
    L = figures["later_L4"]
    print(f"  later, the first run of L4 (scripts/run --device cpu --layers L1,L4): {L['total_s']:.1f} s, building the"
          f" L4-L8's parts ({L['heavy_build_steps']} steps: " + ", ".join(f"{t} {s:.1f} s" for t, s in L["heaviest"]) + ")")
    ratio = figures["ratio_A_over_B"]
    print(f"fresh clone A/B   {ratio:7.2f}  target <= {TARGET} {'met' if ratio <= TARGET else 'MISSED'}"
          f" (stretch {STRETCH}: {'met' if ratio <= STRETCH else 'missed'})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=2)


if __name__ == "__main__":
    main()
