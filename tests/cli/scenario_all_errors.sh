#!/usr/bin/env bash
# A scenario's mistakes all in one run: tests/cli/multi_error/three-mistakes.yaml has a misspelt key, a power
# without its unit and an out-of-range value. `ttsim run` exits 2, writes nothing, and names each mistake with
# its file:line:column and key, one a line; a file with one mistake keeps its one-line message
# (malformed_inputs.sh checks every such file).
source "$(dirname "$0")/lib/eval_checks.bash"
f=tests/cli/multi_error/three-mistakes.yaml

"$ttsim" run "$f" --out "$tmp/out" >"$tmp/stdout" 2>"$tmp/stderr"; rc=$?
cat "$tmp/stderr"
check "exit code 2" '[[ $rc -eq 2 ]]'
check "nothing written" '[[ ! -e "$tmp/out" ]] && [[ ! -s "$tmp/stdout" ]]'
check "says how many" 'grep -q "3 mistakes in $f:" "$tmp/stderr"'
check "the misspelt key, with a hint" 'grep -q "^  $f:9:1: .*plot.*did you mean .plots." "$tmp/stderr"'
check "the missing unit" 'grep -q "^  $f:12:[0-9]*: .energy.switch_power.: " "$tmp/stderr"'
check "the out-of-range value" 'grep -q "^  $f:14:[0-9]*: .metrics.break_even_threshold.: value 2 is out of range" "$tmp/stderr"'

# More than 20 mistakes: the first 20, then a count.
{
  echo "scenario: scaling-study"; echo "workloads: [bert]"; echo "system: dgx-h100"; echo "gpus: [8]"
  echo "energy: {node_power: 1, switch_power: 2, pue: 9}"
  for i in $(seq 1 25); do echo "typo_$i: 1"; done
} >"$tmp/many.yaml"
"$ttsim" run "$tmp/many.yaml" >/dev/null 2>"$tmp/many.err"; rc=$?
check "many mistakes: exit 2, at most 20 listed and the rest counted" \
  '[[ $rc -eq 2 ]] && [[ $(grep -c "^  $tmp/many.yaml:" "$tmp/many.err") -le 20 ]] && grep -q "more)" "$tmp/many.err"'

echo "scenario_all_errors: $fail failed"
[[ $fail -eq 0 ]]
