#!/usr/bin/env bash
# `layout:` in sweep and plan scenarios (tests/cli/layout_scenarios/): applied to every point, the same
# prediction as `predict --layout` at that point, infeasible points reported with predict's reason, and no layout
# key the same as predict's default (fastest with the operator model, published with the lumped one).
source "$(dirname "$0")/lib/eval_checks.bash"
dir=tests/cli/layout_scenarios
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
predict_ttt() { "$ttsim" predict --model operator --system dgx-h100 --format json "$@" | python3 -c 'import json,sys; print(json.load(sys.stdin)["ttt_minutes"])'; }

# Pinned TP 8 x CP 4: every point that runs has it; 8 and 16 GPUs cannot and say why, as predict does.
"$ttsim" run "$dir/sweep-lora-pinned.yaml" --format csv >"$tmp/pinned.csv"; rc=$?
check "pinned sweep exits 0 (some points ran)" '[[ $rc -eq 0 ]]'
check "pinned: every run point has TP 8, CP 4" '[[ $(awk -F, "NR > 1 && \$11 == \"ok\" && !(\$14 == 8 && \$15 == 4)" "$tmp/pinned.csv" | wc -l) -eq 0 && $(awk -F, "NR > 1 && \$11 == \"ok\"" "$tmp/pinned.csv" | wc -l) -eq 2 ]]'
"$ttsim" predict --workload llama2_70b_lora --system dgx-h100 --gpus 8 --model operator --layout tp=8,cp=4 >/dev/null 2>"$tmp/err"; rc=$?
reason=$(sed "s/^ttsim: error: '--layout': //" "$tmp/err")
check "predict refuses the same layout at 8 GPUs" '[[ $rc -eq 2 && -n "$reason" ]]'
check "the sweep row at 8 GPUs gives predict's reason" 'grep -qF -- "$reason" "$tmp/pinned.csv"'
sweep_64=$(awk -F, 'NR > 1 && $10 == 64 { print $19 }' "$tmp/pinned.csv")
check "pinned: the 64-GPU point is predict --layout tp=8,cp=4" 'awk -v a="$sweep_64" -v b="$(predict_ttt --workload llama2_70b_lora --gpus 64 --layout tp=8,cp=4)" "BEGIN { exit !(a > 0 && (a - b) ^ 2 < 1e-10) }"'

# fastest: each point is predict --layout fastest at its count (both at the published batch).
"$ttsim" run "$dir/sweep-bert-fastest.yaml" --format json >"$tmp/fastest.json"; rc=$?
check "fastest sweep exits 0" '[[ $rc -eq 0 ]]'
for n in 8 64; do
    s=$(json "$tmp/fastest.json" "[p['ttt_minutes'] for p in d['points'] if p['gpus'] == $n][0]")
    p=$(predict_ttt --workload bert --gpus $n --layout fastest)
    check "fastest at $n GPUs: sweep $s = predict $p" 'awk -v a="$s" -v b="$p" "BEGIN { exit !(a > 0 && (a - b) ^ 2 < 1e-10) }"'
done
# No layout key = fastest with the operator model (as predict's default), = published with the lumped model;
# fastest is never slower than published.
"$ttsim" run "$dir/sweep-bert-published.yaml" --format csv >"$tmp/published.csv"
"$ttsim" run "$dir/sweep-bert-no-layout.yaml" --format csv >"$tmp/none.csv"
"$ttsim" run "$dir/sweep-bert-fastest.yaml" --format csv >"$tmp/fastest.csv"
check "operator model: no layout key is the same as layout: fastest" 'cmp -s "$tmp/fastest.csv" "$tmp/none.csv"'
check "operator model: layout: published differs from the default (BERT at 8 GPUs has a faster layout)" '! cmp -s "$tmp/published.csv" "$tmp/none.csv"'
sed 's/^model: operator/model: lumped/' "$dir/sweep-bert-no-layout.yaml" >"$tmp/lumped-none.yaml"
sed -e 's/^model: operator/model: lumped/' "$dir/sweep-bert-published.yaml" >"$tmp/lumped-published.yaml"
"$ttsim" run "$tmp/lumped-none.yaml" --format csv >"$tmp/lumped-none.csv"
"$ttsim" run "$tmp/lumped-published.yaml" --format csv >"$tmp/lumped-published.csv"
check "lumped model: no layout key is the same as layout: published" '[[ -s "$tmp/lumped-none.csv" ]] && cmp -s "$tmp/lumped-published.csv" "$tmp/lumped-none.csv"'
check "fastest never slower than published" 'paste -d, <(cut -d, -f19 "$tmp/fastest.csv") <(cut -d, -f19 "$tmp/published.csv") | awk -F, "NR > 1 && \$1 > \$2 * (1 + 1e-9) { bad = 1 } END { exit bad }"'

# A plan with a pinned layout: its answer is predict's at that count and layout.
"$ttsim" run "$dir/plan-bert-pinned.yaml" --format json >"$tmp/plan.json"; rc=$?
check "pinned plan exits 0" '[[ $rc -eq 0 ]]'
gpus=$(json "$tmp/plan.json" "d['answer']['gpus']"); plan_ttt=$(json "$tmp/plan.json" "d['answer']['ttt_minutes']")
check "plan answer ($gpus GPUs) is predict --layout tp=2 there" 'awk -v a="$plan_ttt" -v b="$(predict_ttt --workload bert --gpus "$gpus" --layout tp=2)" "BEGIN { exit !(a > 0 && (a - b) ^ 2 < 1e-10) }"'

"$ttsim" run "$dir/plan-bert-no-layout.yaml" >"$tmp/plan-none.txt"; rc=$?
check "plan where no layout applies: exit 1, the reasons in the answer" '[[ $rc -eq 1 ]] && grep -q "answer: none of the [0-9]* searched configurations could be predicted" "$tmp/plan-none.txt" && grep -q "8 GPUs are not divisible by TP 3" "$tmp/plan-none.txt"'

# `ttsim plan --layout` is the scenario's `layout:`; a searched layout needs --model operator.
"$ttsim" plan --workload bert --system dgx-h100 --deadline 2min --confidence p50 --model operator --layout tp=2 --format json >"$tmp/plan-flag.json"; rc=$?
check "plan --layout tp=2 gives the scenario's answer" '[[ $rc -eq 0 && $(json "$tmp/plan-flag.json" "d[\"answer\"][\"gpus\"]") == "$gpus" && $(json "$tmp/plan-flag.json" "d[\"answer\"][\"ttt_minutes\"]") == "$plan_ttt" ]]'
"$ttsim" plan --workload bert --deadline 2min --model lumped --layout fastest >/dev/null 2>"$tmp/err"; rc=$?
check "plan --model lumped --layout fastest: exit 2 naming --layout" '[[ $rc -eq 2 ]] && grep -qF -- "--layout" "$tmp/err" && grep -qF -- "--model operator" "$tmp/err"'

# A user model: a count where nothing fits is a row with the reason (and the PP hint), the others are predicted.
"$ttsim" run "$dir/user-model-partial.yaml" >"$tmp/um.txt"; rc=$?
check "user model, one count too small: exit 0" '[[ $rc -eq 0 ]]'
check "its 8-GPU row says why, with the PP hint" 'grep -q "^  8 GPUs: no layout of decoder-64b on 8 x H100-SXM .* fits in memory.*more pipeline stages" "$tmp/um.txt"'
check "its 64-GPU row has a layout" 'grep -qE "^ +64  TP [0-9]+ CP" "$tmp/um.txt"'
"$ttsim" run "$dir/user-model-partial.yaml" --format csv >"$tmp/um.csv"
check "csv: the 8-GPU row's error column, the 64-GPU row's empty" '[[ $(awk -F, "NR == 2 { print \$1 }" "$tmp/um.csv") == 8 ]] && awk -F, "NR == 2" "$tmp/um.csv" | grep -q "fits in memory" && [[ -z $(awk -F, "NR == 3 { print \$(NF - 7) }" "$tmp/um.csv") ]]'
"$ttsim" run "$dir/user-model-none-fits.yaml" >"$tmp/none.txt"; rc=$?
check "user model, no count with a layout: exit 1 (nothing feasible), the report with the reason" '[[ $rc -eq 1 ]] && grep -q "^  24 GPUs: no valid layout for d on 24 x H100-SXM" "$tmp/none.txt" && grep -q "^    24  no prediction (below)" "$tmp/none.txt"'
"$ttsim" run "$dir/user-model-none-fits.yaml" --format csv >"$tmp/none.csv"; rc=$?
check "csv too: exit 1, the row's error" '[[ $rc -eq 1 ]] && grep -q "no valid layout" "$tmp/none.csv"'
"$ttsim" run "$dir/user-model-slower.yaml" >"$tmp/slow.txt"; rc=$?
check "user model past its batch: slower at 16384, said so" '[[ $rc -eq 0 ]] && grep -q "note: 16384 GPUs train slower than 4096 .*at most 256 data-parallel replicas" "$tmp/slow.txt"'

"$ttsim" run "$dir/user-model-partial.yaml" --format json >"$tmp/um.json"
check "json: the 8-GPU result is an error, the 64-GPU one a layout" '[[ $(json "$tmp/um.json" "\"error\" in d[\"results\"][0] and \"layout\" in d[\"results\"][1]") == True ]]'
# A count that is not whole nodes is bad input at its key, even beside counts that run.
sed 's/^gpus: \[8, 64\]/gpus: [12, 64]/' "$dir/user-model-partial.yaml" >"$tmp/um-12.yaml"
"$ttsim" run "$tmp/um-12.yaml" >/dev/null 2>"$tmp/err"; rc=$?
check "user model, 12 GPUs on dgx-h100: exit 2 naming the count" '[[ $rc -eq 2 ]] && grep -qF "12 GPUs is not a whole number" "$tmp/err"'
# The slower note compares counts in ascending order, whatever the list's order.
sed 's/^gpus: \[4096, 16384\]/gpus: [16384, 4096]/' "$dir/user-model-slower.yaml" >"$tmp/slow-rev.yaml"
"$ttsim" run "$tmp/slow-rev.yaml" >"$tmp/slow-rev.txt"
check "slower note in count order for a descending list" 'grep -q "note: 16384 GPUs train slower than 4096" "$tmp/slow-rev.txt" && ! grep -q "note: 4096 GPUs train slower" "$tmp/slow-rev.txt"'
# gpus and layout in a sweep's forms: {from, to} doubles, a mapping of pins is the same as its string.
sed -e 's/^gpus: \[8, 64\]/gpus: {from: 64, to: 128}/' "$dir/user-model-partial.yaml" >"$tmp/um-range.yaml"
printf 'layout: {tp: 4}\n' >>"$tmp/um-range.yaml"
"$ttsim" run "$tmp/um-range.yaml" --format json >"$tmp/um-range.json"; rc=$?
sed -e 's/^gpus: \[8, 64\]/gpus: [64, 128]/' "$dir/user-model-partial.yaml" >"$tmp/um-list.yaml"
printf 'layout: tp=4\n' >>"$tmp/um-list.yaml"
"$ttsim" run "$tmp/um-list.yaml" --format json >"$tmp/um-list.json"
check "user model: gpus {from: 64, to: 128} and layout {tp: 4} = [64, 128] and tp=4" \
  '[[ $rc -eq 0 ]] && python3 - "$tmp/um-range.json" "$tmp/um-list.json" <<"PY"
import json, sys
rows = [[(r["gpus"], r["layout"], r["ttt_minutes"]) for r in json.load(open(f))["results"]] for f in sys.argv[1:]]
assert len(rows[0]) == 2 and rows[0] == rows[1], rows
assert all(layout.startswith("TP 4 ") for _, layout, _ in rows[0]), rows
PY'
# On GB200 (72-GPU NVLink domain) the Megatron-style alternative has TP <= 8.
sed -e 's/^system: dgx-h100/system: gb200-nvl72/' -e 's/^gpus: \[4096, 16384\]/gpus: [512]/' "$dir/user-model-slower.yaml" >"$tmp/gb.yaml"
"$ttsim" run "$tmp/gb.yaml" >"$tmp/gb.txt"; rc=$?
check "GB200 user model: a Megatron-style alternative with TP 8" '[[ $rc -eq 0 ]] && grep -q "512 GPUs: Megatron-style (TP 8:" "$tmp/gb.txt"'

# A user model's cost: rented GPU-hours x the scenario's price, whole racks on GB200 (the 8-GPU job rents 72 GPUs).
sed -e 's/^system: dgx-h100/system: gb200-nvl72/' -e 's/^gpus: .*/gpus: [8]/' scenarios/custom-decoder-7b.yaml >"$tmp/gb8.yaml"
printf 'cost: {price_per_gpu_hour: {gb200-nvl72: 4.0}}\n' >>"$tmp/gb8.yaml"
"$ttsim" run "$tmp/gb8.yaml" --format json >"$tmp/gb8.json"; rc=$?
check "user model cost: rented GPU-hours = 9 x GPU-hours on a 72-GPU rack, cost = rented x 4.0, price given" \
  '[[ $rc -eq 0 && $(json "$tmp/gb8.json" "(lambda r: abs(r[\"rented_gpu_hours\"] - 9 * r[\"gpu_hours\"]) < 1e-6 * r[\"gpu_hours\"] and abs(r[\"cost\"][\"amount\"] - 4 * r[\"rented_gpu_hours\"]) < 1e-6 * r[\"cost\"][\"amount\"] and not r[\"cost\"][\"price_is_estimate\"] and r[\"energy_kwh\"] > 0)(d[\"results\"][0])") == True ]]'
"$ttsim" run "$tmp/gb8.yaml" >"$tmp/gb8.txt"
check "and the table says the rack is rented whole" 'grep -q "8 GPUs: rents 1 rack (72 GPUs)" "$tmp/gb8.txt"'

echo "scenario layout: $fail failed"
[[ $fail -eq 0 ]]
