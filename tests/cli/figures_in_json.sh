#!/usr/bin/env bash
# Scripts lose nothing: every figure a command's text answer states is in its JSON (tests/cli/lib/figures_in_json.py
# says how a figure is matched), for predict and plan, plain and with --explain; and their tables keep every line
# within 120 characters.
source "$(dirname "$0")/lib/eval_checks.bash"
figures="python3 $(dirname "$0")/lib/figures_in_json.py"
# The layout search's wall time is stated in the table only: a result file is the same on any machine and load.
search_time='searched in [0-9.]+ s'
# Definitions, not figures: the reference count of throughput efficiency.
definitions='against 8 GPUs|on 8 GPUs'

predict_case() {   # NAME ARGS...
  local name=$1; shift
  "$ttsim" predict "$@" >"$tmp/$name.txt"
  "$ttsim" predict "$@" --explain >"$tmp/$name.explain.txt"
  "$ttsim" predict "$@" --format json >"$tmp/$name.json"
  check "predict $name: every figure of the table is in the JSON" "$figures $tmp/$name.txt $tmp/$name.json '$search_time' '$definitions'"
  check "predict $name --explain: every figure is in the JSON" "$figures $tmp/$name.explain.txt $tmp/$name.json '$search_time' '$definitions'"
  check "predict $name: no line over 120 characters" "awk 'length(\$0) > 120 { bad = 1 } END { exit bad }' $tmp/$name.txt $tmp/$name.explain.txt"
  check "predict $name: the answer first" "sed -n 2p $tmp/$name.txt | grep -q '^  time to train '"
}
predict_case bert1024 --workload bert --system dgx-h100 --gpus 1024
predict_case lora64 --workload llama2_70b_lora --system dgx-h100 --gpus 64
predict_case gb200_36 --workload bert --system gb200-nvl72 --gpus 36
# The check can fail: a figure the JSON does not hold is found.
printf '  time to train      123.457 min\n' >"$tmp/made_up.txt"
check "a figure missing from the JSON is found" "! $figures $tmp/made_up.txt $tmp/bert1024.json >/dev/null"
check "predict: provenance only with --explain" '! grep -q "^  default:" $tmp/bert1024.txt && grep -q "^  default:" $tmp/bert1024.explain.txt && grep -q "MLP41 bert configs" $tmp/bert1024.json'

plan_case() {   # NAME ARGS...
  local name=$1; shift
  "$ttsim" plan "$@" >"$tmp/$name.txt"
  "$ttsim" plan "$@" --explain >"$tmp/$name.explain.txt"
  "$ttsim" plan "$@" --format json >"$tmp/$name.json"
  "$ttsim" plan "$@" --format csv >"$tmp/$name.csv"
  check "plan $name: every figure of the table is in the JSON" "$figures $tmp/$name.txt $tmp/$name.json"
  check "plan $name --explain: every figure is in the JSON" "$figures $tmp/$name.explain.txt $tmp/$name.json"
  check "plan $name: no line over 120 characters" "awk 'length(\$0) > 120 { bad = 1 } END { exit bad }' $tmp/$name.txt $tmp/$name.explain.txt"
}
plan_case bert --workload bert --system dgx-h100 --deadline 1min
plan_case sd_budget --workload stable_diffusion --budget-gpu-hours 100
plan_case lora_gb200 --workload llama2_70b_lora --system gb200-nvl72 --deadline 30min --allocation tray

# The plan CSV carries the p90 GPU-hours and cost the text quotes, and the warnings (LoRA on GB200 beyond the
# largest LoRA result, 1,024 GPUs: each such row's extrapolation warning reaches scripts).
check "plan CSV: p90 GPU-hours, p90 cost and warnings columns" 'head -1 $tmp/bert.csv | grep -q ",gpu_hours_p90,cost_p90,warnings$"'
check "plan CSV: the answer row's p90 figures are the text's" 'python3 - $tmp/bert.csv $tmp/bert.txt <<"PY"
import csv, re, sys
row = [r for r in csv.DictReader(open(sys.argv[1])) if r["answer"] == "true"][0]
text = open(sys.argv[2]).read()
m = re.search(r"at p90 \(judged\): [0-9.]+ s, ([0-9.]+) GPU-hours, ([0-9.]+) USD", text)
assert m, text
# Equal to the text up to its rounding: half a unit of its last printed digit (three significant figures).
half = lambda t: 0.5 * 10 ** -(len(t.split(".")[1]) if "." in t else 0) + 1e-9
assert abs(float(row["gpu_hours_p90"]) - float(m.group(1))) <= half(m.group(1)), (row, m.groups())
assert abs(float(row["cost_p90"]) - float(m.group(2))) <= half(m.group(2)), (row, m.groups())
PY'
check "plan CSV: extrapolation warnings reach scripts" 'python3 -c "
import csv, sys
rows = [r for r in csv.DictReader(open(\"$tmp/lora_gb200.csv\")) if r[\"status\"] == \"ok\" and int(r[\"gpus\"]) > 1024]
assert rows and all(\"beyond the largest llama2_70b_lora\" in r[\"warnings\"] for r in rows), rows[:1]
"'
# A plan scenario takes --explain too: the billing rule and the energy formula then print, and only then.
"$ttsim" run scenarios/plan-deadline-bert.yaml --explain >"$tmp/scenario.explain.txt"
"$ttsim" run scenarios/plan-deadline-bert.yaml >"$tmp/scenario.txt"
check "run PLAN.yaml --explain adds the formulas" 'grep -q "^  energy = PUE" $tmp/scenario.explain.txt && ! grep -q "^  energy = PUE" $tmp/scenario.txt'
# One percentile per line of the answer: a line naming p90 figures names no p50 ones.
check "plan: one percentile per answer line" '! grep -E "at p90.*p50|at p50.*p90" $tmp/bert.txt'

echo "figures_in_json: $fail failed"
[[ $fail -eq 0 ]]
