"""probe/cuda_names against the CUDA toolkit's own crt/ and nv/target: each source of the probe that reaches them is
preprocessed twice with the NVIDIA packages' CUDA runtime headers, once with the declarations and once with the
toolkit's headers in their place; apart from the lines of those headers themselves, the two must be the same tokens.
So every name the declarations give means on the host what the toolkit's header makes it mean, and a source
compiled with them is the source compiled with the toolkit's.

Usage: compare_headers.py DECLARED TOOLKIT_INCLUDE -- COMPILER FLAG... -- SOURCE...
Exit 0: the same; 1: a difference (the first one shown); 77: no toolkit headers here to compare with (a skip)."""
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

SKIP = 77
TOKEN = re.compile(r'[A-Za-z_]\w*|\d[\w.]*|"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|\S')
MARKER = re.compile(r'^# \d+ "([^"]*)"')


def tokens(text, header_dirs):
    """The tokens outside the compared headers, each with the file it came from; and whether those headers were read."""
    out, inside, reached = [], False, False
    for line in text.splitlines():
        m = MARKER.match(line)
        if m:
            path = os.path.realpath(m.group(1))
            inside = any(path.startswith(d) for d in header_dirs)
            reached = reached or inside
            current = m.group(1)
            continue
        if not inside:
            out.extend((t, current) for t in TOKEN.findall(line))
    return out, reached


def preprocess(compiler, flags, include, source):
    r = subprocess.run([compiler, *flags, "-isystem", include, "-E", source], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{source} does not preprocess with {include}:\n{r.stderr[-3000:]}")
    return r.stdout


def compare(compiler, flags, declared, real, source):
    dirs = [os.path.realpath(os.path.join(d, sub)) + "/" for d in (declared, real) for sub in ("crt", "nv")]
    ours, reached = tokens(preprocess(compiler, flags, declared, source), dirs)
    if not reached:
        return f"{source}: does not reach crt/ or nv/ (not compared)", True
    theirs, _ = tokens(preprocess(compiler, flags, real, source), dirs)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        if a[0] != b[0]:
            return (f"{source}: token {i} differs: '{a[0]}' (from {a[1]}) with the declarations, "
                    f"'{b[0]}' (from {b[1]}) with the toolkit's headers"), False
    if len(ours) != len(theirs):
        return f"{source}: {len(ours)} tokens with the declarations, {len(theirs)} with the toolkit's headers", False
    return f"{source}: the same {len(ours)} tokens", True


def main(argv):
    first, second = argv.index("--"), len(argv) - 1 - argv[::-1].index("--")
    declared, toolkit = argv[1:first]
    compiler, flags, sources = argv[first + 1], argv[first + 2:second], argv[second + 1:]
    if not all(os.path.exists(os.path.join(toolkit, h)) for h in ("crt/host_defines.h", "nv/target")):
        print(f"no CUDA toolkit headers at {toolkit} (crt/host_defines.h, nv/target): nothing to compare with")
        return SKIP
    with tempfile.TemporaryDirectory() as real:  # the toolkit's crt/ and nv/ alone, not its other headers
        for sub in ("crt", "nv"):
            os.symlink(os.path.join(toolkit, sub), os.path.join(real, sub))
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            results = list(pool.map(lambda s: compare(compiler, flags, declared, real, s), sources))
    for line, _ in results:
        print(line)
    compared = sum(1 for line, ok in results if ok and "the same" in line)
    if not all(ok for _, ok in results):
        return 1
    if compared == 0:
        print("no source reached crt/ or nv/: the list of sources is wrong")
        return 1
    print(f"{compared} sources: the declarations mean what the toolkit's headers mean")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
