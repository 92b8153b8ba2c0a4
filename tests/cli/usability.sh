#!/usr/bin/env bash
# What a new user sees: help texts that match what is accepted, usage errors, capped threads, collective sizes
# and SHARP wording, planning answers that say how far off an infeasible query is and what limited it, prices
# stated with their source, published comparisons at the published batch, and plot scripts that render names as
# text and keep the published marker unique.
source "$(dirname "$0")/lib/eval_checks.bash"
has() { grep -qF -- "$2" "$1"; }

# No command: a usage error on stderr (one line), exit 2, nothing on stdout.
"$ttsim" >"$tmp/out" 2>"$tmp/err"; rc=$?
check "no command exits 2" '[[ $rc -eq 2 ]]'
check "no command: one stderr line with the usage" '[[ $(wc -l <"$tmp/err") -eq 1 ]] && has "$tmp/err" "usage: ttsim <collective|run|predict|calibrate|validate|plan|merge>"'
check "no command: nothing on stdout" '[[ ! -s "$tmp/out" ]]'

"$ttsim" --help >"$tmp/help"
check "top-level help lists --version" 'has "$tmp/help" "--version"'
"$ttsim" predict --help >"$tmp/help"
check "predict usage names the command once" 'head -1 "$tmp/help" | grep -q "^usage: ttsim predict --workload"'
check "predict --system documents GPU names" 'has "$tmp/help" "MI300X" && has "$tmp/help" "A100-SXM" && has "$tmp/help" "gb200-nvl72"'
"$ttsim" run --help >"$tmp/help"
check "run --help lists every kind" '(for k in collective scaling-study sweep plan; do grep -q "^  $k " "$tmp/help" || exit 1; done)'
check "run --help does not defer to the README" '! has "$tmp/help" "and so on"'
"$ttsim" collective --help >"$tmp/help"
check "collective --help: tree and sharp are all-reduce only" 'has "$tmp/help" "tree, hierarchical and sharp run all-reduce only"'
"$ttsim" calibrate --help >"$tmp/help"
check "calibrate --help: default ./profiles" 'has "$tmp/help" "(default: ./profiles)"'

# calibrate without --out writes ./profiles, never the shipped models/profiles (a quick fit: <= 8 GPUs; the
# lumped file, named by --model lumped since the default is the operator model). Single-node results leave the
# straggler spread unsearched (no multi-node job shows it), so the fit passes its sanity (docs/uncertainty.md).
shipped=$(md5sum models/profiles/profiles.yaml)
(cd "$tmp" && "$ttsim" calibrate --max-gpus 8 --model lumped >"$tmp/calibrate.txt" 2>&1)
check "calibrate defaults to ./profiles" '[[ -s "$tmp/profiles/profiles.yaml" ]] && has "$tmp/calibrate.txt" "wrote ./profiles/profiles.yaml"'
check "calibrate leaves the shipped profiles alone" '[[ $(md5sum models/profiles/profiles.yaml) == "$shipped" ]]'

# --batch-per-rank: each layout priced trains at R x its own DP, the published one (lumped) and the searched
# fastest (operator) alike, and the published layout at R x DP is --global-batch R x DP to the last digit.
json_field() { python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); print(eval(sys.argv[2], {"j": j}))' "$@"; }
for model in lumped operator; do
  "$ttsim" predict --workload llama2_70b_lora --system dgx-h100 --gpus 64 --batch-per-rank 2 --model "$model" \
    --format json >"$tmp/per_rank_$model.json"
  check "--batch-per-rank 2 ($model): global batch = 2 x the layout's DP" \
    '[[ $(json_field "$tmp/per_rank_$model.json" "j[\"global_batch\"] == 2 * j[\"layout\"][\"dp\"]") == True ]]'
done
dp=$(json_field "$tmp/per_rank_lumped.json" 'j["layout"]["dp"]')
"$ttsim" predict --workload llama2_70b_lora --system dgx-h100 --gpus 64 --global-batch $((2 * dp)) --model lumped \
  --format json >"$tmp/per_rank_global.json"
check "--batch-per-rank 2 on the published layout = --global-batch 2 x DP" \
  '[[ $(json_field "$tmp/per_rank_lumped.json" "j[\"ttt_minutes\"]") == $(json_field "$tmp/per_rank_global.json" "j[\"ttt_minutes\"]") ]]'
check "--batch-per-rank: the defaults say how the global batch was made" \
  'grep -q "samples per data-parallel rank" "$tmp/per_rank_lumped.json" && grep -q "samples per data-parallel rank" "$tmp/per_rank_operator.json"'

# `ttsim validate`'s report (which refits the model) is checked in validate_report.sh.

# --threads beyond the machine: capped with one note, no TBB warning.
"$ttsim" run scenarios/sweep-batch-rules.yaml --threads 1000 >/dev/null 2>"$tmp/err"; rc=$?
check "--threads 1000 runs" '[[ $rc -eq 0 ]]'
check "--threads 1000: no TBB warning" '! grep -q "TBB" "$tmp/err"'
"$ttsim" plan --workload bert --system dgx-h100 --deadline 10min --max-gpus 16 --threads 1000 >/dev/null 2>"$tmp/err"
check "plan --threads 1000: no TBB warning" '! grep -q "TBB" "$tmp/err"'

# Collective sizes double (nccl-tests -f 2): 1MiB..3MiB runs 1 and 2 MiB, and the table says 3MiB was not reached.
"$ttsim" collective --min-size 1MiB --max-size 3MiB --format csv >"$tmp/sizes.csv"
check "sizes double: 1MiB and 2MiB only" '[[ $(cut -d, -f1 "$tmp/sizes.csv" | tail -n +2 | tr "\n" " ") == "1048576 2097152 " ]]'
"$ttsim" collective --min-size 1MiB --max-size 3MiB >"$tmp/sizes.txt"
check "table says the maximum was not reached" 'has "$tmp/sizes.txt" "the maximum 3MiB is not reached by doubling, the last size is 2MiB"'
# SHARP is only claimed where InfiniBand switches can run it.
"$ttsim" collective --max-size 1MiB >"$tmp/one-node.txt"
"$ttsim" collective --gpus 16 --max-size 1MiB >"$tmp/two-nodes.txt"
"$ttsim" collective --topology topologies/examples/pcie_servers_ethernet.yaml --max-size 1MiB >"$tmp/ethernet.txt"
check "one node: no SHARP" 'has "$tmp/one-node.txt" "no SHARP (no InfiniBand switches)" && ! has "$tmp/one-node.txt" "SHARP on"'
check "two DGX nodes: SHARP on" 'has "$tmp/two-nodes.txt" "SHARP on"'
check "Ethernet topology: no SHARP" 'has "$tmp/ethernet.txt" "no SHARP (no InfiniBand switches)" && ! has "$tmp/ethernet.txt" "SHARP on"'
check "Ethernet topology: auto never picks the SHARP algorithm" '! grep -q " sharp " "$tmp/ethernet.txt"'

# Fabric routing from the flags and from a scenario's cluster: static ECMP hashes inter-SU tree edges onto shared
# leaf up-links at 1,024 GPUs (tests/unit/test_collective_routing.cpp), adaptive sprays them; the default is adaptive.
"$ttsim" collective --help >"$tmp/help"
check "collective --help documents --routing" 'has "$tmp/help" "--routing R" && has "$tmp/help" "static (one hashed ECMP path per flow)"'
tree="--gpus 1024 --algo tree --protocol Simple --min-size 1GiB --max-size 1GiB"
# shellcheck disable=SC2086
"$ttsim" collective $tree --format csv >"$tmp/adaptive.csv"
# shellcheck disable=SC2086
"$ttsim" collective $tree --routing adaptive --format csv >"$tmp/adaptive-explicit.csv"
# shellcheck disable=SC2086
"$ttsim" collective $tree --routing static --format csv >"$tmp/static.csv"
# shellcheck disable=SC2086
"$ttsim" collective $tree --routing static >"$tmp/static.txt"
busbw() { sed -n 2p "$1" | cut -d, -f4; }
check "--routing adaptive is the default" 'cmp -s "$tmp/adaptive.csv" "$tmp/adaptive-explicit.csv"'
check "--routing static: tree busbw below adaptive at 1,024 GPUs" \
  'python3 -c "import sys; s, a = map(float, sys.argv[1:]); sys.exit(0 if 0 < s < 0.8 * a else 1)" "$(busbw "$tmp/static.csv")" "$(busbw "$tmp/adaptive.csv")"'
check "--routing static is stated in the table" 'has "$tmp/static.txt" "1024 GPUs, NDR 400G NICs, static ECMP routing"'
printf 'scenario: collective\ncluster: {system: dgx-h100, gpus: 1024, routing: static}\ncollective: {op: allreduce, algorithm: tree, protocol: Simple, min_size: 1GiB, max_size: 1GiB}\n' >"$tmp/static.yaml"
"$ttsim" run "$tmp/static.yaml" --format csv >"$tmp/static-scenario.csv"
check "cluster.routing: static in a scenario = --routing static" 'cmp -s "$tmp/static.csv" "$tmp/static-scenario.csv"'
# Training predictions, plans and training scenarios take the same routing; a static choice is stated, the default
# is not.
"$ttsim" predict --help >"$tmp/help"
check "predict --help documents --routing" 'has "$tmp/help" "--routing R" && has "$tmp/help" "static (one hashed ECMP path per flow)"'
"$ttsim" plan --help >"$tmp/help"
check "plan --help documents --routing" 'has "$tmp/help" "--routing R"'
"$ttsim" predict --workload bert --system dgx-h100 --gpus 16 --routing static >"$tmp/predict-static.txt"
check "predict --routing static is stated with the system" 'has "$tmp/predict-static.txt" "(dgx-h100, NDR 400G NICs, static ECMP routing, SHARP on)"'
"$ttsim" predict --workload bert --system dgx-h100 --gpus 16 --routing static --format json >"$tmp/predict-static.json"
"$ttsim" predict --workload bert --system dgx-h100 --gpus 16 --format json >"$tmp/predict-default.json"
check "predict JSON names a static routing only" \
  'has "$tmp/predict-static.json" "\"routing\": \"static\"" && ! has "$tmp/predict-default.json" "\"routing\""'
printf 'scenario: sweep\nworkloads: [bert]\nsystem: dgx-h100\ngpus: [16]\nrouting: static\n' >"$tmp/sweep-static.yaml"
"$ttsim" run "$tmp/sweep-static.yaml" >"$tmp/sweep-static.txt"
check "routing: static in a sweep scenario is stated in its title" 'has "$tmp/sweep-static.txt" "1 point, static ECMP routing)"'
# SHARP: on by default across NVLink domains, off on request; the prediction's header says which either way, its
# JSON in layout.sharp. Sweeps and plans state a SHARP choice next to the routing, and their result files record
# both per point.
"$ttsim" predict --help >"$tmp/help"
check "predict --help documents --sharp" 'has "$tmp/help" "--sharp on|off"'
"$ttsim" plan --help >"$tmp/help"
check "plan --help documents --sharp" 'has "$tmp/help" "--sharp on|off"'
"$ttsim" predict --workload bert --system dgx-h100 --gpus 16 >"$tmp/predict-sharp.txt"
"$ttsim" predict --workload bert --system dgx-h100 --gpus 16 --sharp off >"$tmp/predict-nosharp.txt"
"$ttsim" predict --workload bert --system dgx-h100 --gpus 8 >"$tmp/predict-one-node.txt"
check "predict states SHARP on (default, two nodes) and off (--sharp off; one node)" \
  'has "$tmp/predict-sharp.txt" "16 x H100-SXM (dgx-h100, NDR 400G NICs, SHARP on)" && has "$tmp/predict-nosharp.txt" "(dgx-h100, NDR 400G NICs, SHARP off)" && has "$tmp/predict-one-node.txt" "(dgx-h100, NDR 400G NICs, SHARP off)"'
"$ttsim" predict --workload bert --system dgx-h100 --gpus 16 --sharp off --format json >"$tmp/predict-nosharp.json"
check "predict --sharp off: layout.sharp is false in JSON" \
  'python3 -c "import json, sys; sys.exit(json.load(open(sys.argv[1]))[\"layout\"][\"sharp\"] is not False)" "$tmp/predict-nosharp.json"'
"$ttsim" predict --workload bert --system dgx-h100 --gpus 16 --sharp on --format json >"$tmp/predict-sharp-on.json"
"$ttsim" predict --workload bert --system dgx-h100 --gpus 16 --format json >"$tmp/predict-sharp-default.json"
check "predict --sharp on across nodes = the default (whose defaults list names it)" \
  'python3 -c "import json, sys; a, b = (json.load(open(f)) for f in sys.argv[1:]); [x.pop(\"defaults\") for x in (a, b)]; sys.exit(a != b)" "$tmp/predict-sharp-on.json" "$tmp/predict-sharp-default.json"'
# The gradient reduction pin: JSON names the mode; a bad value is refused naming --layout, exit 2, no output.
"$ttsim" predict --workload bert --system dgx-h100 --gpus 64 --layout tp=1,cp=1,reduction=overlapped --format json >"$tmp/predict-overlapped.json"
check "predict --layout reduction=overlapped: layout.gradient_reduction is overlapped in JSON" \
  'python3 -c "import json, sys; sys.exit(json.load(open(sys.argv[1]))[\"layout\"][\"gradient_reduction\"] != \"overlapped\")" "$tmp/predict-overlapped.json"'
"$ttsim" predict --workload bert --system dgx-h100 --gpus 64 --layout reduction=early --out "$tmp/bad-reduction" >"$tmp/bad-reduction.txt" 2>&1; rc=$?
check "predict --layout reduction=early: exit 2 naming --layout, nothing written" \
  '[[ $rc -eq 2 ]] && has "$tmp/bad-reduction.txt" "--layout" && has "$tmp/bad-reduction.txt" "overlapped or after_backward" && [[ ! -e "$tmp/bad-reduction" ]]'
printf 'scenario: sweep\nworkloads: [bert]\nsystem: dgx-h100\ngpus: [8, 16]\nrouting: static\nsharp: false\nplots: false\n' >"$tmp/sweep-nosharp.yaml"
"$ttsim" run "$tmp/sweep-nosharp.yaml" --out "$tmp/sweep-nosharp" >"$tmp/sweep-nosharp.txt"
check "sharp: false in a sweep scenario is stated in its title" 'has "$tmp/sweep-nosharp.txt" "2 points, static ECMP routing, SHARP off)"'
check "the sweep CSV records routing and SHARP per point (appended columns)" \
  'head -1 "$tmp/sweep-nosharp/results.csv" | grep -q ",warnings,routing,sharp_used,pareto_cost,layout_choice,published_layout_minutes,mfu,model_tflops_per_gpu,goodput,interruptions,checkpoint_interval_minutes,expected_wall_minutes,wall_p90_minutes\$" && [[ $(grep -c ",static,false,\(true\|false\)," "$tmp/sweep-nosharp/results.csv") -eq 2 ]]'
check "the sweep JSON records routing and SHARP per point" \
  'python3 -c "import json, sys; p = json.load(open(sys.argv[1]))[\"points\"]; sys.exit(not all(x[\"routing\"] == \"static\" and x[\"network\"][\"sharp\"] == \"off\" and x[\"layout\"][\"sharp\"] is False for x in p))" "$tmp/sweep-nosharp/results.json"'
"$ttsim" plan --workload bert --system dgx-h100 --deadline 1h --max-gpus 16 --sharp off >"$tmp/plan-nosharp.txt"
check "plan --sharp off is stated with the systems searched" 'has "$tmp/plan-nosharp.txt" "searched dgx-h100 (SHARP off)"'

# Planning: an infeasible query names the closest candidates and the range that limited them; durations and
# budgets are written as people write them; prices say where they come from.
"$ttsim" plan --workload bert --system dgx-h100 --deadline 5s --max-gpus 64 >"$tmp/plan.txt" 2>/dev/null; rc=$?
check "infeasible plan exits 1 (nothing feasible), with its report" '[[ $rc -eq 1 ]]'
check "deadline shown as 5.00 s at the percentile judged" 'has "$tmp/plan.txt" "time-to-train <= 5.00 s at p90"'
check "infeasible plan: closest (fastest) shown" 'has "$tmp/plan.txt" "closest:" && has "$tmp/plan.txt" "fastest: 8 nodes (64 GPUs) of dgx-h100"'
check "infeasible plan: search range limit flagged" 'has "$tmp/plan.txt" "limited by the search range"'
check "plan: default price stated as an estimate" 'has "$tmp/plan.txt" "dgx-h100 2.50 USD (default estimate)"'
"$ttsim" plan --workload bert --system dgx-h100 --deadline 10min --max-gpus 8 --format json >"$tmp/plan.json"
check "answer at the top of the range is flagged (json)" 'python3 -c "import json,sys; a=json.load(open(sys.argv[1]))[\"answer\"]; assert a[\"gpus\"] == 8 and a[\"limited_by_search_range\"]" "$tmp/plan.json"'
"$ttsim" plan --workload stable_diffusion --system dgx-h100 --budget 1USD --max-gpus 64 --price 3 >"$tmp/budget.txt"
check "budget shows its currency" 'has "$tmp/budget.txt" "cost <= 1 USD"'
check "a given price is not called an estimate" 'has "$tmp/budget.txt" "dgx-h100 3.00 USD" && ! has "$tmp/budget.txt" "default estimate"'

# A sweep without cost: states the default price; plots render names as text, published marker unique.
cat >"$tmp/b200.yaml" <<'YAML'
scenario: scaling-study
workloads: [llama2_70b_lora]
system: dgx-b200
gpus: [16, 32]   # no published B200 result at these counts
include_published_gpus: false
YAML
"$ttsim" run "$tmp/b200.yaml" --out "$tmp/b200" >"$tmp/b200.txt" 2>&1
check "sweep table states the default price and its source" 'has "$tmp/b200.txt" "dgx-b200 5.00 USD (default estimate)" && has "$tmp/b200.txt" "models/planning/cost_energy.hpp"'
check "sweep table names time-to-train efficiency" 'has "$tmp/b200.txt" "TTT eff." && has "$tmp/b200.txt" "time-to-train efficiency"'
gp="$tmp/b200/plot_llama2_70b_lora.gp"
check "plot script: noenhanced text (no subscripts from _)" '[[ $(grep -c "set termoption noenhanced" "$gp") -eq 4 ]]'
check "plot script: no published legend without published points" '! has "$gp" "MLPerf v4.1 published"'
"$ttsim" run scenarios/sweep-batch-rules.yaml --format json >"$tmp/rules.json"
check "Pareto ties: rcp_optimal points equal to published points are both on the front" 'python3 - "$tmp/rules.json" <<"PY"
import json, sys
points = [p for p in json.load(open(sys.argv[1]))["points"] if p["status"] == "ok"]
key = lambda p: (p["gpus"], p["ttt_minutes"], p["gpu_hours"])
published = {key(p): p for p in points if p["batch_rule"] == "published"}
twins = [(p, published[key(p)]) for p in points if p["batch_rule"] == "rcp_optimal" and key(p) in published]
assert twins, "no rcp_optimal point equals a published-rule point: the check tests nothing"
for a, b in twins:
    assert a["pareto"] == b["pareto"], (a["gpus"], a["pareto"], b["pareto"])
PY'

# The default scenario compares like with like: the error comes from the prediction at the published batch (the
# same prediction as `ttsim validate`'s in-sample row: validate_report.sh).
"$ttsim" run scenarios/default.yaml --format json --out "$tmp/default" >"$tmp/default.json"
check "published error = prediction at the published batch vs the published score" 'python3 - "$tmp/default.json" <<"PY"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "ttsim.results/2"
pub = [p for p in d["points"] if p["status"] == "ok" and p["published"]]
assert pub
differ = 0
for p in pub:
    q = p["published"]
    assert abs(q["error_percent"] - (q["predicted_minutes"] - q["minutes"]) / q["minutes"] * 100) < 1e-6, p["gpus"]
    if p["global_batch"] not in q["global_batches"]:
        differ += 1
        assert q["predicted_minutes"] != p["ttt_minutes"], (p["workload"], p["gpus"])
        assert any("published v4.1 batch" in w for w in p["warnings"]), (p["workload"], p["gpus"])
bert48 = [p for p in pub if p["workload"] == "bert" and p["gpus"] == 48][0]
assert bert48["published"]["global_batches"] == [6912], bert48["published"]
assert differ > 0, "no row with a batch different from the published one: the check tests nothing"
PY'

gp="$tmp/default/plot_bert.gp"
check "plot script: the published marker (pt 13) is used by the published points only" '[[ $(grep -c "pub using 1:2 with points pt 13 " "$gp") -eq 2 ]] && ! grep -E "dat index [0-9]+ using [^,]* pt 13 " "$gp"'

# NIC speeds by generation or by bandwidth, from the flag and from a scenario: the same speed gives the same result,
# the header names it, and a slower NIC gives a lower bus bandwidth across nodes.
"$ttsim" collective --help >"$tmp/help"
check "collective --help documents NIC bandwidths" 'has "$tmp/help" "hdr (200Gb/s)" && has "$tmp/help" "100Gb/s or 25GB/s"'
nicrun="--gpus 64 --op allreduce --algo ring --protocol Simple --min-size 1GiB --max-size 1GiB --format csv"
for nic in 100Gb/s hdr 200Gb/s 25GB/s ndr xdr; do
  # shellcheck disable=SC2086
  "$ttsim" collective $nicrun --nic "$nic" >"$tmp/nic-${nic//\//_}.csv"
done
check "--nic 200Gb/s = --nic 25GB/s = --nic hdr" 'cmp -s "$tmp/nic-hdr.csv" "$tmp/nic-200Gb_s.csv" && cmp -s "$tmp/nic-hdr.csv" "$tmp/nic-25GB_s.csv"'
check "busbw rises with the NIC: 100Gb/s < hdr < ndr < xdr" \
  'python3 -c "import sys; v = list(map(float, sys.argv[1:])); sys.exit(0 if all(0 < a < b for a, b in zip(v, v[1:])) else 1)" "$(busbw "$tmp/nic-100Gb_s.csv")" "$(busbw "$tmp/nic-hdr.csv")" "$(busbw "$tmp/nic-ndr.csv")" "$(busbw "$tmp/nic-xdr.csv")"'
"$ttsim" collective --gpus 64 --min-size 1MiB --max-size 1MiB --nic 100Gb/s >"$tmp/nic100.txt"
check "--nic 100Gb/s is stated in the table" 'has "$tmp/nic100.txt" "64 GPUs, 100Gb/s NICs"'
printf 'scenario: collective\ncluster: {system: dgx-h100, gpus: 64, nic: 200Gb/s}\ncollective: {op: allreduce, algorithm: ring, protocol: Simple, min_size: 1GiB, max_size: 1GiB}\n' >"$tmp/hdr.yaml"
"$ttsim" run "$tmp/hdr.yaml" --format csv >"$tmp/hdr-scenario.csv"
check "cluster.nic: 200Gb/s in a scenario = --nic hdr" 'cmp -s "$tmp/nic-hdr.csv" "$tmp/hdr-scenario.csv"'

# Fabric what-ifs for training (one system model): predict and plan take --nic, --oversubscription, --topology; the
# header names the fabric; options that cannot apply exit 2 naming the flag.
"$ttsim" predict --workload retinanet --system dgx-h100 --gpus 1024 --sharp off --nic hdr --format json >"$tmp/p-hdr.json"
"$ttsim" predict --workload retinanet --system dgx-h100 --gpus 1024 --sharp off --format json >"$tmp/p-ndr.json"
"$ttsim" predict --workload retinanet --system dgx-h100 --gpus 1024 --sharp off --oversubscription 2 >"$tmp/p-over.txt"
# RetinaNet at one image a GPU is host-bound (its fitted per-step host cost sits beside the whole-iteration graph),
# so the slower fabric shows in the gradient communication, and the time to train is no shorter.
check "predict --nic hdr communicates slower than NDR, from the simulated fabric" \
  'python3 -c "import json, sys; a, b = (json.load(open(f)) for f in sys.argv[1:]); sys.exit(not (a[\"comm_total_ms\"] > b[\"comm_total_ms\"] and a[\"ttt_minutes\"] >= b[\"ttt_minutes\"] and a[\"fabric\"] == \"HDR 200G NICs\" and a[\"comm_topology\"] == \"dgx-h100 x1024\"))" "$tmp/p-hdr.json" "$tmp/p-ndr.json"'
check "predict --oversubscription 2 is stated in the header" 'has "$tmp/p-over.txt" "(dgx-h100, NDR 400G NICs, 2:1 oversubscribed, SHARP off)"'
"$ttsim" predict --workload bert --system dgx-h100 --topology topologies/examples/two_dgx_h100.yaml >"$tmp/p-topo.txt"
check "predict --topology FILE runs on the file's 16 GPUs" 'has "$tmp/p-topo.txt" "bert on 16 x H100-SXM (dgx-h100, topology topologies/examples/two_dgx_h100.yaml, SHARP off)"'
# The shipped profiles train the RCP mean times the calibration's convergence lag, and say so (table and JSON).
"$ttsim" predict --workload bert --system dgx-h100 --gpus 8 --explain >"$tmp/p-lag.txt"   # provenance: --explain
"$ttsim" predict --workload bert --system dgx-h100 --gpus 8 --format json >"$tmp/p-lag.json"
check "predict states the convergence lag it trains" \
  'has "$tmp/p-lag.txt" "(the RCP mean x 1.0" && python3 -c "import json, sys; p = json.load(open(sys.argv[1])); sys.exit(not (p[\"convergence_lag\"] > 1 and p[\"samples_to_converge\"] > 0))" "$tmp/p-lag.json"'
refused() {  # refused FLAG ARGS...: exit 2 and the flag named on stderr
  local flag=$1; shift
  "$ttsim" "$@" >/dev/null 2>"$tmp/refused.err"; local code=$?
  [[ $code -eq 2 ]] && grep -q -- "'--$flag'" "$tmp/refused.err"
}
check "--oversubscription within one NVLink domain is refused" 'refused oversubscription predict --workload bert --system dgx-h100 --gpus 8 --oversubscription 2'
check "--nic with --topology is refused" 'refused nic predict --workload bert --system dgx-h100 --topology topologies/examples/two_dgx_h100.yaml --nic xdr'
check "--gpus other than the topology file's is refused" 'refused gpus predict --workload bert --system dgx-h100 --gpus 32 --topology topologies/examples/two_dgx_h100.yaml'
check "plan --price for a system not searched is refused" 'refused price plan --workload bert --system dgx-h100 --deadline 1min --price dgx-b200=5'
"$ttsim" plan --workload bert --deadline 2min --nic xdr --oversubscription 2 >"$tmp/plan-xdr.txt"
check "plan --nic/--oversubscription are stated with the systems searched" 'has "$tmp/plan-xdr.txt" "(XDR 800G NICs, 2:1 oversubscribed)"'

# --routing static beside SHARP: says what it can change (SHARP's trees are not ECMP-routed flows).
"$ttsim" predict --workload bert --system dgx-h100 --gpus 1024 --routing static >"$tmp/static.txt"
"$ttsim" predict --workload bert --system dgx-h100 --gpus 1024 --routing static --sharp off >"$tmp/static-off.txt"
check "--routing static with SHARP on says it changes only flows" 'has "$tmp/static.txt" "static routing changes only the collectives"'
check "--routing static with SHARP off says nothing of it" '! has "$tmp/static-off.txt" "static routing changes only"'

echo "usability: $fail failed"
[[ $fail -eq 0 ]]
