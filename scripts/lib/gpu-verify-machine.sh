# scripts/gpu-verify's section "the machine around the GPU" (docs/machine.md, docs/signatures.md), sourced by it:
# the limits and variables of rented boxes, containers and batch systems, made for real on the GPU machine, each run's
# code and signature compared with what is expected; the host facts compared with ulimit -a, df /dev/shm, the cgroup
# files and nvidia-smi; the GPU free right after exit (nvidia-smi --query-compute-apps), 10 runs in the default compute
# mode and, as root, 10 in exclusive-process mode (restored afterwards). Uses gpu-verify's case_, $B and $out.
# Each check prints "ok" or "MISMATCH"; machine_mismatches counts the latter (gpu-verify exits non-zero on any).
machine_mismatches=0

# expect NAME EXIT SIGNATURE [PYTHON-CONDITION]: the case's report has this exit code and error.signature ("-" for
# none), and the condition (on r, the report) holds.
expect() {
  local name=$1 want_exit=$2 want_sig=$3 cond=${4:-True}
  if python3 - "$out/reports/$name.json" "$want_exit" "$want_sig" "$cond" <<'PY'; then echo "  $name: ok"; else
import json, sys
r = json.load(open(sys.argv[1])); want_exit, want_sig, cond = int(sys.argv[2]), sys.argv[3], sys.argv[4]
sig = (r["error"] or {}).get("signature") or "-"
ok = r["exit_code"] == want_exit and sig == want_sig and eval(cond)
print(f"  {sys.argv[1].rsplit('/', 1)[-1]}: exit {r['exit_code']} signature {sig} cause {(r['error'] or {}).get('cause')}"
      f" | warnings {r['warnings']}")
sys.exit(0 if ok else 1)
PY
    echo "  $name: MISMATCH (want exit $want_exit, signature $want_sig, $cond)"; machine_mismatches=$((machine_mismatches + 1))
  fi
}

machine_facts_agree() {  # the default run's host facts against the machine's own tools
  case_ machine_default 0 --
  ulimit -a
  df -B1 --output=size,avail /dev/shm
  nvidia-smi --query-gpu=index,driver_version,compute_mode,persistence_mode,mig.mode.current --format=csv,noheader
  nvidia-smi -q | grep -A3 -i fabric | head -12
  if python3 - "$out/reports/machine_default.json" <<'PY'; then echo "  host facts: ok"; else
import json, os, re, resource, subprocess, sys
r = json.load(open(sys.argv[1])); h = r["host"]; bad = []
def same(what, got, want):
    print(f"  {what}: report {got!r}, system {want!r}")
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
print(f"  /dev/shm free: report {h['shm']['free_bytes']}, df {avail} (changes while running)")
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
print("  libcuda:", lib, "| fabric:", [(g.get("fabric_state"), g.get("fabric_status")) for g in h["nvml"]["gpus"]])
print("  container:", h["container"], "| cgroup of this shell:", open("/proc/self/cgroup").read().strip())
for f in ("memory.max", "cpu.max", "pids.max"):
    p = "/sys/fs/cgroup" + open("/proc/self/cgroup").read().split("::")[-1].strip() + "/" + f
    if os.path.exists(p): print(f"  {p}: {open(p).read().strip()}")
print("  environment:", h["environment"], "| warnings:", r["warnings"])
sys.exit(1 if bad else 0)
PY
    echo "  host facts: MISMATCH"; machine_mismatches=$((machine_mismatches + 1))
  fi
}

# free_after NAME N: N default runs, each followed at once by nvidia-smi's list of compute processes; prints how many
# runs left their worker on the GPU. WANT_FREE=1: every run must leave it free.
free_after() {
  local name=$1 n=$2 taken=0 i apps
  for ((i = 1; i <= n; i++)); do
    "$B" >/dev/null 2>&1
    apps=$(nvidia-smi --query-compute-apps=pid --format=csv,noheader | grep -c .)
    [ "$apps" -gt 0 ] && taken=$((taken + 1))
  done
  echo "  $name: the GPU still held right after exit in $taken of $n runs"
  if [ "${WANT_FREE:-0}" = 1 ] && [ "$taken" -gt 0 ]; then
    echo "  $name: MISMATCH (want 0)"; machine_mismatches=$((machine_mismatches + 1))
  fi
}

machine_around_gpu() {
  echo "== the machine around the GPU: limits, variables, scratch folder, /dev/shm, the GPU free at exit (issue 37)"
  machine_facts_agree
  echo "-- ulimit -n: the smallest limits give the open-files signature (never exclusive-process mode), or pass"
  for n in 16 32 64 128 256; do
    (ulimit -n "$n"; case_ "nofile_$n" any --)
    expect "nofile_$n" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["exit_code"])' "$out/reports/nofile_$n.json")" \
      "$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("-" if r["exit_code"] == 0 else "open-files-limit")' "$out/reports/nofile_$n.json")"
  done
  echo "-- ulimit -v 16 GiB: CUDA cannot start (GPU_UNAVAILABLE), named as the address-space limit"
  (ulimit -v $((16 << 20)); case_ ulimit_v 6 --)
  expect ulimit_v 6 address-space-limit '"out of memory" in r["error"]["message"]'
  echo "-- PYTORCH_CUDA_ALLOC_CONF that the allocator refuses"
  case_ alloc_conf_invalid 9 PYTORCH_CUDA_ALLOC_CONF=foo:bar --
  expect alloc_conf_invalid 9 allocator-config-invalid \
    'any(e["name"] == "PYTORCH_CUDA_ALLOC_CONF" and e["valid"] is None and e["value"] is None for e in r["host"]["environment"])'
  echo "-- CUDA_VISIBLE_DEVICES=0,0 names one device twice"
  case_ visible_twice 6 CUDA_VISIBLE_DEVICES=0,0 --
  expect visible_twice 6 visible-devices-duplicate '"0,0" not in json.dumps(r)'
  echo "-- TMPDIR naming a folder that does not exist: the true verdict, a warning naming TMPDIR"
  case_ tmpdir_missing 0 TMPDIR="$out/no-such-tmp" --
  expect tmpdir_missing 0 - 'r["host"]["temp"]["skipped"] == ["TMPDIR"] and any(w.startswith("TMPDIR names") for w in r["warnings"])'
  case_ tmpdir_missing_output 0 TMPDIR="$out/no-such-tmp" -- --layers app
  expect tmpdir_missing_output 0 - 'r["host"]["temp"]["folder"] == "tmp"'
  echo "-- CUDA_LAUNCH_BLOCKING=1 left on: a warning"
  case_ launch_blocking 0 CUDA_LAUNCH_BLOCKING=1 --
  expect launch_blocking 0 - 'any(w.startswith("CUDA_LAUNCH_BLOCKING=1 is set") for w in r["warnings"])'
  local ngpu; ngpu=$(nvidia-smi -L | grep -c '^GPU ')
  if [ "$(id -u)" = 0 ] && [ "$ngpu" -ge 2 ]; then
    echo "-- L8 over NCCL, two ranks on GPUs 0 and 1, peer access off (NCCL's shared-memory transport), /dev/shm 1 MiB"
    local port=$((29700 + RANDOM % 500))
    unshare -m sh -c "mount -t tmpfs -o size=1m kd-shm /dev/shm || exit 125
      for r in 0 1; do NCCL_P2P_DISABLE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port WORLD_SIZE=2 RANK=\$r LOCAL_RANK=\$r \
        '$B' --layers L8 --output '$out/reports/l8_small_shm-'\$r.json >'$out/reports/l8_small_shm-'\$r.txt 2>&1 & done; wait"
    for r in 0 1; do
      expect "l8_small_shm-$r" 17 collective-shm-small 'r["host"]["shm"]["size_bytes"] == 1 << 20'
    done
  else
    echo "  l8_small_shm: NOT RUN (needs root for a private /dev/shm and 2 GPUs: NCCL refuses two ranks on one GPU)"
  fi
  echo "-- the GPU free right after exit: default compute mode (the verdict need not wait), 10 runs"
  free_after default_mode 10
  if [ "$(id -u)" = 0 ]; then
    local mode; mode=$(nvidia-smi -i 0 --query-gpu=compute_mode --format=csv,noheader)
    if nvidia-smi -i 0 -c EXCLUSIVE_PROCESS >/dev/null 2>&1; then
      trap 'nvidia-smi -i 0 -c DEFAULT >/dev/null' EXIT
      echo "-- exclusive-process mode (was: $mode): the worker is waited for, so the next job finds the GPU free"
      WANT_FREE=1 free_after exclusive_mode 10
      case_ exclusive_next_job 0 --
      expect exclusive_next_job 0 - 'r["device"]["compute_mode"] == "exclusive_process"'
      python3 -c 'import time, torch; torch.zeros(1, device="cuda"); print("holding", flush=True); time.sleep(30)' \
        >"$out/reports/holder.txt" 2>&1 &
      local holder=$!
      for _ in $(seq 100); do grep -q holding "$out/reports/holder.txt" && break; sleep 0.2; done
      case_ exclusive_busy any --
      expect exclusive_busy "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["exit_code"])' "$out/reports/exclusive_busy.json")" \
        exclusive-process-busy '"busy or unavailable" in r["error"]["message"]'
      kill "$holder"; wait "$holder" 2>/dev/null
      nvidia-smi -i 0 -c DEFAULT >/dev/null && trap - EXIT
      echo "  compute mode restored: $(nvidia-smi -i 0 --query-gpu=compute_mode --format=csv,noheader)"
    else
      echo "  exclusive_mode: NOT RUN (nvidia-smi -c EXCLUSIVE_PROCESS refused on this machine)"
    fi
  else
    echo "  exclusive_mode: NOT RUN (needs root to set the compute mode)"
  fi
  echo "== the machine around the GPU: $machine_mismatches mismatch(es)"
}
