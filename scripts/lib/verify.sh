# Sourced by scripts/gpu-verify and scripts/gpu-verify-rented-box (after common.sh, with $out and $B set): every case
# is compared with what it must give (scripts/lib/verify-cases), and verify_summary ends the run with one line,
# "N cases, N as expected, N differed: NAME (want X, got Y), ...", and exit 1 when any differed or none ran.
#   case_ NAME WANT [ENV=VALUE ...] -- ARGS...  runs ${DIAG:-$B} ARGS --output $out/reports/NAME.json; WANT is
#                                               CODE/EXIT or CODE/EXIT/STAGE (a shell pattern: "L[23].*")
#   report_case_ NAME WANT RC REPORT TEXT       the same comparison of a run made elsewhere (a job's ranks)
#   check_ NAME WANT GOT [DETAIL]               any other result that must be WANT (an exit status, a count)
#   skip_ NAME WHY                              a case this machine cannot run: in the summary, never a pass
verify_start() {
  mkdir -p "$out/reports"
  : >"$out/cases.jsonl"
}

report_case_() { python3 "$KD_ROOT/scripts/lib/verify-cases" case "$out/cases.jsonl" "$@"; }
check_() { python3 "$KD_ROOT/scripts/lib/verify-cases" check "$out/cases.jsonl" "$@"; }
skip_() { python3 "$KD_ROOT/scripts/lib/verify-cases" skip "$out/cases.jsonl" "$@"; }
verify_summary() {
  echo "== summary: every case against what it must give"
  python3 "$KD_ROOT/scripts/lib/verify-cases" summary "$out/cases.jsonl"
}

case_() {
  local name=$1 want=$2 envs=() t0=$EPOCHREALTIME rc
  shift 2
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  env "${envs[@]}" "${DIAG:-$B}" "$@" --output "$out/reports/$name.json" >"$out/reports/$name.txt" 2>&1
  rc=$?
  report_case_ "$name" "$want" "$rc" "$out/reports/$name.json" "$out/reports/$name.txt" \
    "$(awk "BEGIN{print $EPOCHREALTIME - $t0}")"
}

# host_check_pairs N: --host-check's cost, the default run and --host-check alternated N times; each pair's exits checked.
host_check_pairs() {
  local i t0 t1 t2 rc1 rc2
  for ((i = 1; i <= $1; i++)); do
    t0=$EPOCHREALTIME; "$B" >/dev/null 2>&1; rc1=$?
    t1=$EPOCHREALTIME; "$B" --host-check >/dev/null 2>&1; rc2=$?
    t2=$EPOCHREALTIME
    check_ "host_check_pair_$i" "0 0" "$rc1 $rc2" \
      "$(printf 'plain %.3f s host-check %.3f s' "$(awk "BEGIN{print $t1 - $t0}")" "$(awk "BEGIN{print $t2 - $t1}")")"
  done
}
