# scripts/gpu-verify's section "the machine around the GPU" (docs/machine.md, docs/signatures.md), sourced by it after
# scripts/lib/verify.sh: the limits and variables of rented boxes, containers and batch systems, made for real on the
# GPU machine, each run's code and signature compared with what it must give (case_, check_, skip_, so that
# verify_summary counts them); the host facts compared with ulimit -a, df /dev/shm, the cgroup files and nvidia-smi;
# the GPU free right after exit (nvidia-smi --query-compute-apps), 10 runs in the default compute mode and, as root,
# 10 in exclusive-process mode (restored afterwards).

# sig_ NAME: the case's error.signature, "-" for none.
sig_() {
  python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print((r["error"] or {}).get("signature") or "-")' \
    "$out/reports/$1.json" 2>/dev/null || echo "(no report)"
}

# holds_ NAME CONDITION: True when the Python CONDITION on r (the case's report) holds.
holds_() {
  python3 - "$out/reports/$1.json" "$2" <<'PY' 2>/dev/null || echo "(no report)"
import json, sys
r = json.load(open(sys.argv[1]))
print(bool(eval(sys.argv[2])))
PY
}

# verdict_ NAME: the case's CODE/EXIT as its report says (for a run whose verdict this section does not fix).
verdict_() {
  python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print(r["code"] + "/" + str(r["exit_code"]))' \
    "$out/reports/$1.json" 2>/dev/null || echo "(none)/?"
}

machine_facts_agree() {  # the default run's host facts against the machine's own tools
  case_ machine_default GPU_CHECK_PASSED/0 --
  ulimit -a
  df -B1 --output=size,avail /dev/shm
  nvidia-smi --query-gpu=index,driver_version,compute_mode,persistence_mode,mig.mode.current --format=csv,noheader
  nvidia-smi -q | grep -A3 -i fabric | head -12
  local agree
  agree=$(python3 - "$out/reports/machine_default.json" <<'PY'
import json, os, re, subprocess, sys
r = json.load(open(sys.argv[1])); h = r["host"]; bad = []
def same(what, got, want):
    print(f"  {what}: report {got!r}, system {want!r}", file=sys.stderr)
    if got != want: bad.append(what)
def ulimit(flag):  # bash's own answer, soft (-S) and hard (-H), in bytes for the KiB ones
    out = []
    for kind in ("S", "H"):
        v = subprocess.run(["bash", "-c", f"ulimit -{kind}{flag}"], capture_output=True, text=True).stdout.strip()
        out.append(None if v == "unlimited" else int(v) * (1024 if flag in "vls" else 1))
    return {"soft": out[0], "hard": out[1]}
for key, flag in (("open_files", "n"), ("address_space_bytes", "v"), ("locked_memory_bytes", "l"),
                  ("processes", "u"), ("stack_bytes", "s")):
    same(f"ulimit -{flag}", h["limits"][key], ulimit(flag))
size, avail = (int(x) for x in subprocess.run(["df", "-B1", "--output=size,avail", "/dev/shm"], capture_output=True,
                                              text=True).stdout.split()[-2:])
same("/dev/shm size", h["shm"]["size_bytes"], size)
print(f"  /dev/shm free: report {h['shm']['free_bytes']}, df {avail} (changes while running)", file=sys.stderr)
smi = subprocess.run(["nvidia-smi", "--query-gpu=driver_version,compute_mode,persistence_mode,mig.mode.current",
                      "--format=csv,noheader"], capture_output=True, text=True).stdout.splitlines()
driver, mode, persistence, mig = (x.strip() for x in smi[0].split(","))
same("kernel driver", h["nvidia"]["kernel_driver_version"], driver)
same("compute mode", r["device"]["compute_mode"], {"Default": "default", "Exclusive_Process": "exclusive_process",
                                                  "Prohibited": "prohibited"}.get(mode, mode))
same("NVML compute mode", h["nvml"]["gpus"][0]["compute_mode"], r["device"]["compute_mode"])
same("persistence", h["nvml"]["gpus"][0]["persistence_mode"], persistence.lower())
same("MIG", h["nvml"]["gpus"][0]["mig_mode"], None if mig in ("[N/A]", "N/A") else mig.lower())
nodes = sorted(n for n in os.listdir("/dev") if n.startswith("nvidia") and not os.path.isdir("/dev/" + n))
same("device nodes", [n["name"] for n in h["nvidia"]["device_nodes"]], nodes)
same("nvidia_uvm loaded", h["nvidia"]["uvm_loaded"], "nvidia_uvm " in open("/proc/modules").read())
lib = h["nvidia"]["libcuda"]
real = os.path.realpath(subprocess.run(["bash", "-c", "ldconfig -p | awk '/libcuda.so.1 /{print $NF; exit}'"],
                                       capture_output=True, text=True).stdout.strip())
same("libcuda version", lib["version"], re.sub(r"^libcuda\.so\.", "", os.path.basename(real)))
print("  libcuda:", lib, "| fabric:", [(g.get("fabric_state"), g.get("fabric_status")) for g in h["nvml"]["gpus"]],
      file=sys.stderr)
cg = open("/proc/self/cgroup").read()
print("  container:", h["container"], "| cgroup of this shell:", cg.strip(), file=sys.stderr)
for f in ("memory.max", "memory.current", "cpu.max", "pids.max"):
    p = "/sys/fs/cgroup" + cg.split("::")[-1].strip() + "/" + f
    if os.path.exists(p): print(f"  {p}: {open(p).read().strip()}", file=sys.stderr)
print("  environment:", h["environment"], "| warnings:", r["warnings"], file=sys.stderr)
print(",".join(bad) or "agree")
PY
)
  check_ host_facts_against_the_tools agree "$agree" "(each fact above: report, system)"
}

# free_after_ NAME N: N default runs, each followed at once by nvidia-smi's list of compute processes; how many
# runs left their worker on the GPU, checked against WANT (a count) unless WANT is empty.
free_after_() {  # NAME N WANT [ARGS...]: N runs of the diagnostic with ARGS, nvidia-smi right after each exit
  local name=$1 n=$2 want=$3 taken=0 i
  shift 3
  for ((i = 1; i <= n; i++)); do
    "$B" "$@" >/dev/null 2>&1
    [ "$(nvidia-smi --query-compute-apps=pid --format=csv,noheader | grep -c .)" -gt 0 ] && taken=$((taken + 1))
  done
  if [ -n "$want" ]; then
    check_ "$name" "$want" "$taken" "(runs of $n whose worker nvidia-smi still listed right after exit)"
  else
    echo "$name: the GPU still held right after exit in $taken of $n runs (the default mode need not wait)"
  fi
}

machine_around_gpu() {
  echo "== the machine around the GPU: limits, variables, scratch folder, /dev/shm, the GPU free at exit (issue 37)"
  machine_facts_agree
  echo "-- ulimit -n: a failure at the smallest limits names the open-files limit, never exclusive-process mode"
  local n
  for n in 16 32 64 128 256; do
    # Whether CUDA starts under the limit is the machine's: the run itself is not a case, its signature is.
    (ulimit -n "$n"; "$B" --output "$out/reports/nofile_$n.json" >"$out/reports/nofile_$n.txt" 2>&1)
    local got; got=$(verdict_ "nofile_$n")
    if [ "${got%%/*}" = GPU_CHECK_PASSED ]; then
      check_ "nofile_${n}_signature" - "$(sig_ "nofile_$n")" "(passed: $got)"
    else
      check_ "nofile_${n}_signature" open-files-limit "$(sig_ "nofile_$n")" "($got; 256 and up is not called low)"
    fi
  done
  echo "-- ulimit -v 16 GiB: CUDA fails at its start or at its first allocations, named as the address-space limit"
  # Where it fails is the driver's (an H200 in 2026-12: at L3's first kernels, "CUDA error: out of memory").
  (ulimit -v $((16 << 20)); case_ ulimit_v "GPU_UNAVAILABLE/6/L2.gpu_available | OUT_OF_MEMORY/9/L3.*" --)
  check_ ulimit_v_signature address-space-limit "$(sig_ ulimit_v)"
  echo "-- PYTORCH_CUDA_ALLOC_CONF that the allocator refuses"
  case_ alloc_conf_invalid "RUNTIME_ERROR/9/L3.*" PYTORCH_CUDA_ALLOC_CONF=foo:bar --
  check_ alloc_conf_invalid_signature allocator-config-invalid "$(sig_ alloc_conf_invalid)"
  echo "-- CUDA_VISIBLE_DEVICES=0,0 names one device twice"
  case_ visible_twice GPU_UNAVAILABLE/6/L2.gpu_available CUDA_VISIBLE_DEVICES=0,0 --
  check_ visible_twice_signature visible-devices-duplicate "$(sig_ visible_twice)"
  check_ visible_twice_value_not_in_report True "$(holds_ visible_twice '"0,0" not in json.dumps(r)')"
  echo "-- TMPDIR naming a folder that does not exist: the true verdict, a warning naming TMPDIR"
  case_ tmpdir_missing GPU_CHECK_PASSED/0 TMPDIR="$out/no-such-tmp" --
  check_ tmpdir_missing_warned True \
    "$(holds_ tmpdir_missing 'r["host"]["temp"]["skipped"] == ["TMPDIR"] and any(w.startswith("TMPDIR names") for w in r["warnings"])')"
  case_ tmpdir_missing_app GPU_CHECK_PASSED/0 TMPDIR="$out/no-such-tmp" -- --layers app
  echo "-- CUDA_LAUNCH_BLOCKING=1 left on: a warning"
  case_ launch_blocking GPU_CHECK_PASSED/0 CUDA_LAUNCH_BLOCKING=1 --
  check_ launch_blocking_warned True "$(holds_ launch_blocking 'any(w.startswith("CUDA_LAUNCH_BLOCKING=1 is set") for w in r["warnings"])')"
  local ngpu; ngpu=$(nvidia-smi -L | grep -c '^GPU ')
  if [ "$(id -u)" = 0 ] && [ "$ngpu" -ge 2 ]; then
    echo "-- L8 over NCCL, two ranks on GPUs 0 and 1, peer access off (NCCL's shared-memory transport), /dev/shm 1 MiB"
    local port=$((29700 + RANDOM % 500)) r
    unshare -m sh -c "mount -t tmpfs -o size=1m kd-shm /dev/shm || exit 125
      for r in 0 1; do NCCL_P2P_DISABLE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port WORLD_SIZE=2 RANK=\$r LOCAL_RANK=\$r \
        '$B' --layers L8 --output '$out/reports/l8_small_shm-'\$r.json >'$out/reports/l8_small_shm-'\$r.txt 2>&1 & done; wait"
    for r in 0 1; do
      report_case_ "l8_small_shm-$r" "COLLECTIVE_UNREACHABLE/17" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["exit_code"])' \
        "$out/reports/l8_small_shm-$r.json" 2>/dev/null || echo 1)" "$out/reports/l8_small_shm-$r.json" "$out/reports/l8_small_shm-$r.txt"
      check_ "l8_small_shm-${r}_signature" collective-shm-small "$(sig_ "l8_small_shm-$r")"
    done
  else
    skip_ l8_small_shm "needs root for a private /dev/shm and 2 GPUs (NCCL refuses two ranks on one GPU)"
  fi
  echo "-- the GPU free right after exit: default compute mode (the verdict need not wait), 10 runs"
  free_after_ gpu_free_default_mode 10 ""
  # The compute mode is the machine owner's setting, never changed by a verification: the wait that a non-default
  # mode turns on is shown by asking for it (as CTest's layer sequence does), the mode itself by the stand-in NVML.
  echo "-- the wait for the worker's end asked for (--wait-for-gpu-release): the GPU free right after exit, 10 runs"
  free_after_ gpu_free_waited 10 0 --wait-for-gpu-release
  skip_ gpu_free_exclusive_mode "the GPU's compute mode is the machine owner's setting: not changed by a verification"
}
