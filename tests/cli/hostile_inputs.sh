#!/usr/bin/env bash
# Hostile inputs beyond tests/cli/malformed_inputs.sh. Each must be refused with exit code 2 and ONE stderr
# line (no crash, no hang, no leftover output files):
#  1. every bad topology in tests/cli/malformed/topologies/, reached through a collective scenario's
#     cluster.topology_file (tests/cli/malformed/topology-scenarios/) and through `ttsim collective --topology`:
#     the message names the *topology* file:line and contains the text of its "# expect: TEXT" first line;
#  2. files that are not YAML text: a NUL byte, a directory, /dev/zero, an oversized file, deep nesting;
#  3. an --out directory that cannot be created;
#  4. resource limits lowered through TTSIM_MAX_GPUS / TTSIM_MAX_MEMORY;
#  5. SIGINT in the middle of a long sweep (tests/cli/long_sweep.yaml, once the `sweep` kind exists): the run
#     stops, results.csv holds only complete rows, and no temporary files remain.
set -u
ttsim=$1; root=$2
cd "$root"
pass=0; fail=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

check() {  # name, expected-text, location-regex, command...
  local name=$1 expect=$2 where=$3; shift 3
  local out="$tmp/out" err="$tmp/err" code
  timeout 60 "$@" >"$out" 2>"$err"; code=$?
  local lines; lines=$(wc -l <"$err")
  local ok=1 why=""
  [[ $code -eq 2 ]] || { ok=0; why="exit code $code (want 2)"; }
  [[ $lines -eq 1 ]] || { ok=0; why+=" stderr has $lines lines (want 1)"; }
  if [[ -n $where ]] && ! grep -q -- "$where" "$err"; then ok=0; why+=" no '$where' in message"; fi
  if [[ -n $expect ]] && ! grep -qF -- "$expect" "$err"; then ok=0; why+=" message lacks '$expect'"; fi
  if ((ok)); then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL $name: $why"; sed 's/^/    /' "$err" | head -3; fi
}
no_output() {  # name, dir
  if [[ -e $2 ]] && [[ -n $(ls -A "$2" 2>/dev/null) ]]; then fail=$((fail+1)); echo "FAIL $1: left output files behind"; fi
  rm -rf "$2"
}

# 1. Bad topologies, through a scenario and through the flag.
for topo in tests/cli/malformed/topologies/*.yaml; do
  name=$(basename "$topo" .yaml)
  expect=$(sed -n '1s/^# expect: //p' "$topo")
  scenario=tests/cli/malformed/topology-scenarios/$name.yaml
  if [[ ! -f $scenario ]]; then fail=$((fail+1)); echo "FAIL $topo: no $scenario"; continue; fi
  check "$scenario" "$expect" "topologies/$name.yaml:[0-9]\+" "$ttsim" run "$scenario" --out "$tmp/outdir"
  no_output "$scenario" "$tmp/outdir"
  check "collective --topology $topo" "$expect" "topologies/$name.yaml:[0-9]\+" \
    "$ttsim" collective --topology "$topo" --out "$tmp/outdir/x.txt"
  no_output "collective --topology $topo" "$tmp/outdir"
done

# 2. Files that are not YAML text.
printf 'scenario: collective\nname: a\0b\n' >"$tmp/nul.yaml"
check "NUL byte" "NUL byte" "nul.yaml:2:" "$ttsim" run "$tmp/nul.yaml"
check "a directory" "is a directory" "" "$ttsim" run tests/cli
check "/dev/zero" "not a regular file" "/dev/zero" "$ttsim" run /dev/zero
check "topology_file: /dev/zero" "not a regular file" "" "$ttsim" collective --topology /dev/zero
head -c $((17 * 1024 * 1024)) /dev/zero | tr '\0' '#' >"$tmp/huge.yaml"
check "17 MiB file" "at most 16MiB" "huge.yaml" "$ttsim" run "$tmp/huge.yaml"
{ printf 'scenario: '; head -c 200000 /dev/zero | tr '\0' '['; } >"$tmp/deep.yaml"
check "deeply nested flow sequence" "" "deep.yaml:[0-9]\+" "$ttsim" run "$tmp/deep.yaml"
{ printf 'scenario: collective\nname: '; head -c 2000000 /dev/zero | tr '\0' 'x'; printf '\n'; } >"$tmp/long.yaml"
check "2 MB scalar, missing keys" "missing required key 'cluster'" "long.yaml:[0-9]\+" "$ttsim" run "$tmp/long.yaml"
printf 'scenario: collective\ncluster: &a {system: dgx-h100, gpus: 8, x: *a}\n' >"$tmp/alias.yaml"
check "recursive alias" "" "alias.yaml:[0-9]\+" "$ttsim" run "$tmp/alias.yaml"

# 3. An --out directory that cannot be created (a regular file is in the way).
touch "$tmp/file"
check "--out under a regular file" "" "" "$ttsim" run scenarios/collective-h100-nvls.yaml --out "$tmp/file/sub"
check "collective --out under a regular file" "" "" "$ttsim" collective --gpus 8 --max-size 2MiB --out "$tmp/file/sub/x.csv"

# 4. Resource limits (sim/resource_guard.hpp): lowered through the environment, they refuse up front.
check "TTSIM_MAX_GPUS=4, scenario" "TTSIM_MAX_GPUS" "collective-h100-nvls.yaml:[0-9]\+" \
  env TTSIM_MAX_GPUS=4 "$ttsim" run scenarios/collective-h100-nvls.yaml --out "$tmp/outdir"
no_output "TTSIM_MAX_GPUS=4" "$tmp/outdir"
check "TTSIM_MAX_GPUS=4, flag" "TTSIM_MAX_GPUS" "" env TTSIM_MAX_GPUS=4 "$ttsim" collective --gpus 8
check "TTSIM_MAX_MEMORY=1MiB" "TTSIM_MAX_MEMORY" "" env TTSIM_MAX_MEMORY=1MiB "$ttsim" collective --gpus 1024
check "TTSIM_MAX_MEMORY malformed" "'TTSIM_MAX_MEMORY'" "" env TTSIM_MAX_MEMORY=lots "$ttsim" collective --gpus 8

# 5. SIGINT halfway through a long sweep. A background job of a non-interactive shell starts with SIGINT
# ignored, so the run is started through python3 with SIGINT restored to its default, as a terminal would.
if [[ -f tests/cli/long_sweep.yaml ]]; then
  kind=$(sed -n 's/^scenario: *//p' tests/cli/long_sweep.yaml)
  if "$ttsim" run --help 2>/dev/null | grep -qw -- "$kind"; then
    out="$tmp/sweep"
    python3 -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])' \
      "$ttsim" run tests/cli/long_sweep.yaml --out "$out" >"$tmp/sweep.stdout" 2>"$tmp/sweep.stderr" &
    pid=$!
    sleep "${TTSIM_SIGINT_AFTER:-4}"   # the whole sweep takes minutes: this is well inside it
    kill -INT "$pid"
    waited=0
    while kill -0 "$pid" 2>/dev/null && ((waited < 120)); do sleep 0.5; waited=$((waited + 1)); done
    if kill -0 "$pid" 2>/dev/null; then
      kill -KILL "$pid"; fail=$((fail+1)); echo "FAIL SIGINT sweep: still running 60 s after SIGINT"
    else
      wait "$pid"; code=$?
      csv="$out/results.csv"
      leftovers=$( (find "$out" -name '*.tmp*' 2>/dev/null || true) | wc -l)
      ok=1
      ((leftovers == 0)) || { ok=0; echo "FAIL SIGINT sweep: $leftovers temporary files left"; }
      if [[ ! -f $csv && $code -eq 130 ]] && ! grep -q . "$tmp/sweep.stderr"; then
        # Killed by the signal's default action: the sweep does not use tools/cli/interrupt.hpp yet.
        echo "SKIP SIGINT sweep: killed by SIGINT (exit $code), no partial results — the sweep engine does not" \
             "check ttsim::cli::interrupted() yet; no temporary files were left ($leftovers)"
      elif [[ ! -f $csv ]]; then
        ok=0; echo "FAIL SIGINT sweep: no results.csv (exit $code)"; head -3 "$tmp/sweep.stderr"
      else
        header_fields=$(head -1 "$csv" | awk -F, '{print NF}')
        rows=$(($(wc -l <"$csv") - 1))
        bad=$(awk -F, -v n="$header_fields" 'NR > 1 && NF != n {c++} END {print c+0}' "$csv")
        [[ -z $(tail -c1 "$csv") ]] || { ok=0; echo "FAIL SIGINT sweep: last row not terminated by a newline"; }
        ((bad == 0)) || { ok=0; echo "FAIL SIGINT sweep: $bad rows with the wrong number of fields"; }
        ((rows >= 1)) || { ok=0; echo "FAIL SIGINT sweep: no complete row before the interrupt"; }
        [[ -f $out/results.json ]] && ! python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$out/results.json" &&
          { ok=0; echo "FAIL SIGINT sweep: results.json is not valid JSON"; }
        echo "SIGINT sweep: exit $code, $rows complete rows; stderr: $(head -c 200 "$tmp/sweep.stderr")"
      fi
      if ((ok)); then pass=$((pass+1)); else fail=$((fail+1)); fi
    fi
  else
    echo "SKIP SIGINT sweep: scenario kind '$kind' not available in this ttsim yet"
  fi
else
  echo "SKIP SIGINT sweep: tests/cli/long_sweep.yaml missing"
fi

echo "hostile inputs: $pass passed, $fail failed"
[[ $fail -eq 0 ]]
