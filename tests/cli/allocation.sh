#!/usr/bin/env bash
# Allocation units on the command line: a GB200 NVL72 plan searches and answers whole racks by default and trays
# with --allocation tray (a smaller answer for a long deadline); CSV and JSON state the unit; the flag and the
# scenario key refuse values and systems they cannot apply to (exit 2, naming the flag or file:line:key);
# `predict` on a count that is not a whole unit answers with a warning.
source "$(dirname "$0")/lib/eval_checks.bash"

plan=(plan --workload llama2_70b_lora --system gb200-nvl72 --deadline 30min)
"$ttsim" "${plan[@]}" --format csv >"$tmp/rack.csv" || { echo "FAIL: rack plan"; exit 1; }
"$ttsim" "${plan[@]}" --allocation tray --format csv >"$tmp/tray.csv" || { echo "FAIL: tray plan"; exit 1; }
check "csv states the unit" 'head -1 "$tmp/rack.csv" | grep -q ",allocation,rented_gpus,layout,global_batch,"'
check "rack plan: every searched count is whole racks" \
    'awk -F, "NR > 1 && \$2 % 72 != 0 { bad = 1 } END { exit bad }" "$tmp/rack.csv"'
check "rack plan answers whole racks" 'grep ",true,true," "$tmp/rack.csv" | grep -Eq ",[0-9]+ racks? \([0-9]+ GPUs\),"'
rack=$(awk -F, '$5 == "true" { print $2 }' "$tmp/rack.csv"); tray=$(awk -F, '$5 == "true" { print $2 }' "$tmp/tray.csv")
check "tray plan answers fewer GPUs than a rack ($tray < $rack), in trays" \
    '[[ -n $tray && -n $rack && $tray -lt $rack && $((tray % 4)) -eq 0 ]] && grep ",true,true," "$tmp/tray.csv" | grep -q " trays\? ("'

"$ttsim" "${plan[@]}" --format json >"$tmp/rack.json"
check "json states the unit and the billing rule" 'python3 - "$tmp/rack.json" <<"PY"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["allocation"]["gb200-nvl72"]["unit"] == "rack", d["allocation"]
assert d["allocation"]["gb200-nvl72"]["gpus_per_unit"] == 72
assert "whole allocation units" in d["billing"]
a = d["answer"]
assert a["rented_gpus"] == a["gpus"] and a["allocation"].endswith("(%d GPUs)" % a["gpus"]), a
PY'
"$ttsim" "${plan[@]}" --explain >"$tmp/rack.txt"   # the billing rule is a formula note: --explain prints it
check "table states the unit and the billing rule" 'grep -q "answer: [0-9]* racks\? ([0-9]* GPUs) of gb200-nvl72" "$tmp/rack.txt" && tr -s "\n " " " <"$tmp/rack.txt" | grep -q "billed in whole allocation units"'

refused() {   # NAME EXPECTED-TEXT COMMAND...: exit 2 and the text on stderr
    local name=$1 text=$2; shift 2
    "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
    check "$name: exit 2 (got $rc)" '[[ $rc -eq 2 ]]'
    check "$name: says '$text'" 'grep -qF -- "$text" "$tmp/err" || { cat "$tmp/err"; false; }'
    check "$name: no output" '[[ ! -s "$tmp/out" ]]'
}
refused "--allocation on a DGX" "'--allocation'" "$ttsim" plan --workload bert --system dgx-h100 --deadline 1min --allocation tray
refused "--allocation on DGXs only" "rented by the node" "$ttsim" plan --workload bert --system dgx-h100,dgx-b200 --deadline 1min --allocation rack
# Beside a GB200 a DGX keeps its node: DGX nodes against GB200 trays in one plan.
"$ttsim" plan --workload bert --system dgx-h100,gb200-nvl72 --deadline 10min --allocation tray >"$tmp/mixed.txt" 2>&1; rc=$?
check "plan over a DGX and a GB200 by the tray: exit 0, trays and a node" \
    '[[ $rc -eq 0 ]] && grep -q "trays (8 GPUs) of gb200-nvl72" "$tmp/mixed.txt" && grep -q "1 node (8 GPUs) of dgx-h100" "$tmp/mixed.txt"' 
refused "--allocation node" "valid: rack, tray" "$ttsim" plan --workload bert --system gb200-nvl72 --deadline 1min --allocation node
refused "--max-gpus below a rack" "'--max-gpus'" "$ttsim" plan --workload bert --system gb200-nvl72 --deadline 1min --max-gpus 64
refused "--node-power on racks only" "'--node-power'" "$ttsim" plan --workload bert --system gb200-nvl72 --deadline 1min --node-power 3kW
cat >"$tmp/tray-dgx.yaml" <<'YAML'
scenario: plan
workload: bert
systems: [dgx-h100]
deadline: 1min
allocation: tray
YAML
refused "allocation: tray on a DGX scenario" "tray-dgx.yaml:5" "$ttsim" run "$tmp/tray-dgx.yaml"

"$ttsim" predict --workload bert --system gb200-nvl72 --gpus 36 >"$tmp/p36.txt" 2>&1; rc=$?
check "predict on 36 GB200 GPUs answers (rc $rc)" '[[ $rc -eq 0 ]] && grep -q "time-to-train\|TTT\|min" "$tmp/p36.txt"'
check "predict on 36 GB200 GPUs warns of the partial rack" 'grep -q "warning: 36 GPUs are not a whole number of gb200-nvl72 racks" "$tmp/p36.txt"'
"$ttsim" predict --workload bert --system gb200-nvl72 --gpus 72 >"$tmp/p72.txt" 2>&1
check "predict on a whole rack does not warn" '! grep -q "not a whole number" "$tmp/p72.txt"'
# A sweep bills a partial rack whole; with `allocation: tray` the same 36 GPUs pay 9 trays (half the cost).
for unit in rack tray; do
    printf 'scenario: sweep\nworkloads: [bert]\nsystems: [gb200-nvl72]\ngpus: [36, 72]\nplots: false\nallocation: %s\n' "$unit" >"$tmp/sweep-$unit.yaml"
    "$ttsim" run "$tmp/sweep-$unit.yaml" --out "$tmp/sweep-$unit" >"$tmp/sweep-$unit.txt" || echo "FAIL: sweep by the $unit"
done
check "sweep by the rack warns of the partial rack" 'grep -q "36 GPUs are not a whole number of gb200-nvl72 racks" "$tmp/sweep-rack.txt"'
check "sweep by the tray does not" '! grep -q "not a whole number" "$tmp/sweep-tray.txt"'
check "sweep: 36 GPUs cost twice by the rack what they cost by the tray; 72 GPUs the same" 'python3 - "$tmp/sweep-rack/results.csv" "$tmp/sweep-tray/results.csv" <<"PY"
import csv, sys
rack, tray = ({int(r["gpus"]): float(r["cost"]) for r in csv.DictReader(open(f))} for f in sys.argv[1:])
assert abs(rack[36] / tray[36] - 2) < 1e-6, (rack, tray)
assert abs(rack[72] / tray[72] - 1) < 1e-9, (rack, tray)
PY'
check "sweep rows state the rented GPU-hours the cost bills (CSV and JSON)" 'python3 - "$tmp/sweep-rack" <<"PY"
import csv, json, sys
d = sys.argv[1]
for r in csv.DictReader(open(d + "/results.csv")):
    rented, used = float(r["rented_gpu_hours"]), float(r["gpu_hours"])
    assert abs(float(r["cost"]) - rented * float(r["price_per_gpu_hour"])) <= 1e-6 * float(r["cost"]), r
    assert abs(rented / used - (2 if r["gpus"] == "36" else 1)) < 1e-6, r
for p in json.load(open(d + "/results.json"))["points"]:
    assert abs(p["cost"]["amount"] - p["rented_gpu_hours"] * p["cost"]["price_per_gpu_hour"]) <= 1e-6 * p["cost"]["amount"]
PY'
# predict on part of a rack: the cost bills the whole rack, and the GPU-hours line says so beside the job's own.
"$ttsim" predict --workload bert --system gb200-nvl72 --gpus 8 --explain >"$tmp/part.txt" 2>&1
check "predict on 8 GPUs of a rack: GPU hours show the rented ones the cost bills" \
    'grep -Eq "GPU hours +[0-9.]+ \([0-9.]+ rented: the whole allocation units, which the cost bills\)" "$tmp/part.txt" && grep -q "cost = rented GPU-hours x price" "$tmp/part.txt"'
"$ttsim" predict --workload bert --system dgx-h100 --gpus 8 >"$tmp/whole.txt" 2>&1
check "predict on a whole node: one GPU-hours figure" 'grep -Eq "GPU hours +[0-9.]+$" "$tmp/whole.txt"'
# On a topology file the rented unit is the file's server (4 PCIe servers of 4 GPUs), not the preset's DGX node.
"$ttsim" plan --workload bert --system dgx-h100 --topology topologies/examples/pcie_servers_ethernet.yaml --deadline 600min >"$tmp/topo.txt" 2>&1
check "plan on a topology file rents its 4-GPU servers" 'grep -q "answer: 4 nodes (16 GPUs) of dgx-h100" "$tmp/topo.txt"'
exit $((fail > 0))
