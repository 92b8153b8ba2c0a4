#!/usr/bin/env bash
# Planning outputs: a sweep gives byte-identical results with --threads 1 and --threads 2; results.json follows
# the ttsim.results/2 schema; trace.json is a Chrome/Perfetto trace with well-formed events; every plot is a valid
# PNG / SVG of non-trivial size; `ttsim plan` answers and rejects a query without a constraint (exit 2).
source "$(dirname "$0")/lib/eval_checks.bash"

cat >"$tmp/sweep.yaml" <<'YAML'
scenario: sweep
name: "planning outputs test"
workloads: [bert, stable_diffusion]
systems: [dgx-h100, dgx-b200]
gpus: {from: 8, to: 256}
include_published_gpus: true
batch: [published, rcp_optimal]
trace: {workload: bert, system: dgx-h100, gpus: 32}
YAML

"$ttsim" run "$tmp/sweep.yaml" --out "$tmp/t1" --threads 1 >"$tmp/t1.txt" 2>"$tmp/t1.err" || { echo "FAIL: sweep --threads 1"; cat "$tmp/t1.err"; exit 1; }
"$ttsim" run "$tmp/sweep.yaml" --out "$tmp/t2" --threads 2 >"$tmp/t2.txt" 2>"$tmp/t2.err" || { echo "FAIL: sweep --threads 2"; cat "$tmp/t2.err"; exit 1; }
check "results.csv identical with 1 and 2 threads" 'cmp -s "$tmp/t1/results.csv" "$tmp/t2/results.csv"'
check "results.json identical with 1 and 2 threads" 'cmp -s "$tmp/t1/results.json" "$tmp/t2/results.json"'
check "trace.json identical with 1 and 2 threads" 'cmp -s "$tmp/t1/trace.json" "$tmp/t2/trace.json"'
check "table identical with 1 and 2 threads" 'cmp -s "$tmp/t1.txt" "$tmp/t2.txt"'
check "no progress bar when stderr is not a terminal" '[[ ! -s "$tmp/t2.err" ]]'
check "csv has a header and one row per point" '[[ $(wc -l <"$tmp/t1/results.csv") -gt 20 ]]'

check "results.json schema" 'python3 - "$tmp/t1/results.json" <<"PY"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "ttsim.results/2", d["schema"]
assert d["kind"] == "sweep"
assert len(d["points"]) > 20 and len(d["series"]) == 8
ok = [p for p in d["points"] if p["status"] == "ok"]
assert ok, "no successful point"
for p in ok:
    for key in ("ttt_minutes", "speedup", "ttt_efficiency", "gpu_hours", "cost", "energy_kwh", "pareto"):
        assert key in p, key
    assert p["ttt_minutes"] > 0 and p["energy_kwh"]["total"] > 0
assert any(p["published"] for p in ok), "no published comparison"
assert any(s["break_even"] for s in d["series"])
PY'

check "trace.json is a well-formed Chrome trace" 'python3 - "$tmp/t1/trace.json" <<"PY"
import json, sys
d = json.load(open(sys.argv[1]))
events = d["traceEvents"]
assert isinstance(events, list) and events
phases = {e["ph"] for e in events}
assert {"X", "C", "M"} <= phases, phases
for e in events:
    for key in ("name", "ph", "pid", "tid", "ts"):
        assert key in e, (key, e)
    assert isinstance(e["pid"], int) and isinstance(e["tid"], int)
    assert isinstance(e["ts"], (int, float)) and e["ts"] >= 0
    if e["ph"] == "X":
        assert isinstance(e["dur"], (int, float)) and e["dur"] >= 0
names = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] in ("process_name", "thread_name")}
assert "compute" in names and "comm" in names, names
PY'

pngs=("$tmp"/t1/*.png); svgs=("$tmp"/t1/*.svg)
check "4 PNG plots" '[[ ${#pngs[@]} -eq 4 ]]'
check "4 SVG plots" '[[ ${#svgs[@]} -eq 4 ]]'
for f in "${pngs[@]}"; do
  check "$(basename "$f") is a PNG" '[[ $(head -c 8 "$f" | od -An -tx1 | tr -d " \n") == 89504e470d0a1a0a ]]'
  check "$(basename "$f") > 5 kB" '[[ $(stat -c %s "$f") -gt 5120 ]]'
done
for f in "${svgs[@]}"; do
  check "$(basename "$f") parses as SVG" 'python3 -c "import sys, xml.etree.ElementTree as E; r = E.parse(sys.argv[1]).getroot(); assert r.tag.endswith(\"svg\")" "$f" && grep -q "<svg" "$f"'
  check "$(basename "$f") > 5 kB" '[[ $(stat -c %s "$f") -gt 5120 ]]'
done
check "no temporary files left" '! ls "$tmp"/t1/*.tmp* >/dev/null 2>&1'

# Planning queries, one command each.
plan_rc=0
"$ttsim" plan --workload bert --system dgx-h100 --deadline 1min --format json >"$tmp/plan.json" 2>"$tmp/plan.err" || plan_rc=$?
check "plan: deadline query runs" '[[ $plan_rc -eq 0 ]]'
check "plan: fewest GPUs meets the deadline" 'python3 - "$tmp/plan.json" <<"PY"
import json, sys
d = json.load(open(sys.argv[1]))
a = d["answer"]
assert d["schema"] == "ttsim.results/2" and d["kind"] == "plan"
assert a and a["ttt_minutes"] <= 1.0 and a["gpus"] % 8 == 0, a
# No smaller evaluated count of the same system meets the deadline.
assert not [e for e in d["evaluated"] if e["feasible"] and e["gpus"] < a["gpus"]]
PY'
"$ttsim" plan --workload stable_diffusion --deadline 10min --minimise cost --max-gpus 1024 >"$tmp/cheap.txt" 2>&1
check "plan: cheapest query answers" 'grep -q "answer: " "$tmp/cheap.txt"'
"$ttsim" plan --workload stable_diffusion --budget 5000USD --max-gpus 512 >"$tmp/budget.txt" 2>&1
check "plan: money budget query answers" 'grep -q "answer: " "$tmp/budget.txt"'
"$ttsim" plan --workload bert >/dev/null 2>"$tmp/noq.err"; rc=$?
check "plan without a constraint exits 2" '[[ $rc -eq 2 ]]'
"$ttsim" plan --workload bert --deadline 1min --budget 100EUR >/dev/null 2>&1; rc=$?
check "plan with a budget in the wrong currency exits 2" '[[ $rc -eq 2 ]]'
# A pinned layout: the search summary names the pins (pasteable into --layout), not "the fastest layout".
"$ttsim" plan --workload bert --system dgx-h100 --deadline 1min --layout tp=2 --max-gpus 64 >"$tmp/pinned.txt" 2>&1
check "plan with pins names them in its summary" 'tr -s "\n " " " <"$tmp/pinned.txt" | grep -q "the fastest layout with the pinned tp=2 that fits"'

echo "planning outputs: $fail failed"
[[ $fail -eq 0 ]]
