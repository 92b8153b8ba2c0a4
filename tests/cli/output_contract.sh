#!/usr/bin/env bash
# One output contract for every command (README "Output"): --format table|csv|json, and --out DIR is a folder
# that receives results.csv and results.json (the --format csv / json texts) and, where they apply, trace.json
# and plots; an existing regular file as --out is refused with exit 2 and nothing is written; a failed run leaves
# no folder behind. `predict` reports cost and energy and takes --price. `ttsim collective` streams its rows in
# nccl-tests' layout and ends with "# Avg bus bandwidth".
source "$(dirname "$0")/lib/eval_checks.bash"

# --- predict: --out DIR with results.csv, results.json (= stdout JSON) and trace.json ---------------------------
pred="predict --workload bert --system dgx-h100 --gpus 64"
# shellcheck disable=SC2086
"$ttsim" $pred --format json >"$tmp/predict.json"
# shellcheck disable=SC2086
"$ttsim" $pred --out "$tmp/predict" >"$tmp/predict.txt"; rc=$?
check "predict --out exits 0" '[[ $rc -eq 0 ]]'
check "predict --out writes results.csv, results.json, trace.json" \
  '[[ -s $tmp/predict/results.csv && -s $tmp/predict/results.json && -s $tmp/predict/trace.json ]]'
check "predict results.json is the stdout JSON" 'cmp -s "$tmp/predict.json" "$tmp/predict/results.json"'
check "predict results.csv has the JSON numbers; trace.json parses" 'python3 - "$tmp/predict" <<"PY"
import csv, json, sys
d = sys.argv[1]
j = json.load(open(d + "/results.json"))
rows = list(csv.DictReader(open(d + "/results.csv")))
assert len(rows) == 1, rows
r = rows[0]
for key in ("ttt_minutes", "ttt_p10_minutes", "ttt_p90_minutes", "gpu_hours", "step_ms"):
    assert abs(float(r[key]) - j[key]) <= 1e-7 * abs(j[key]), key
assert abs(float(r["cost"]) - j["cost"]["amount"]) <= 1e-7 * j["cost"]["amount"]
assert abs(float(r["energy_kwh"]) - j["energy_kwh"]["total"]) <= 1e-7 * j["energy_kwh"]["total"]
assert int(r["gpus"]) == j["gpus"] == 64 and int(r["global_batch"]) == j["global_batch"]
assert json.load(open(d + "/trace.json"))["traceEvents"], "empty trace"
PY'
# A searched layout (the operator model's default) is traced as chosen: the trace's step is the prediction's, not
# the published layout's (LoRA at 64 GPUs: the search picks another TP x CP than v4.1's).
"$ttsim" predict --workload llama2_70b_lora --system dgx-h100 --gpus 64 --out "$tmp/searched" >/dev/null; rc=$?
check "predict --out of a searched layout traces the chosen layout's step" '[[ $rc -eq 0 ]] && python3 - "$tmp/searched" <<"PY"
import json, sys
d = sys.argv[1]
j = json.load(open(d + "/results.json"))
step = json.load(open(d + "/trace.json"))["otherData"]["step_time"]
assert j["layout_choice"] and abs(j["published"]["step_ms"] - j["step_ms"]) > 1e-3, "the search kept the published layout"
ms = j["step_ms"]
assert step == f"{ms:.3f} ms", (step, ms)
PY'
check "predict table states cost and energy" \
  'grep -q "^  cost  *[0-9.]* USD (2.50 USD per GPU-hour, default estimate)" "$tmp/predict.txt" && grep -q "^  energy  *[0-9.]* kWh" "$tmp/predict.txt"'
# shellcheck disable=SC2086
"$ttsim" $pred --format csv >"$tmp/predict.csv"
check "predict --format csv is results.csv" 'cmp -s "$tmp/predict.csv" "$tmp/predict/results.csv"'
check "predict csv: memory per GPU within HBM, the layout choice and the published layout's time (appended columns)" 'python3 - "$tmp/predict.csv" <<"PY"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 1
r = rows[0]
assert list(r)[-15:] == ["warnings", "memory_per_gpu_gb", "memory_capacity_gb", "memory_fits", "layout_choice", "published_layout_minutes", "gradient_reduction", "rented_gpu_hours", "mfu", "model_tflops_per_gpu", "goodput", "interruptions", "checkpoint_interval_minutes", "expected_wall_minutes", "wall_p90_minutes"], list(r)[-15:]
# Failures and checkpoints (models/reliability): a goodput in (0, 1], a wall time no shorter than the failure-free one.
assert 0 < float(r["goodput"]) <= 1 and float(r["interruptions"]) >= 0 and float(r["checkpoint_interval_minutes"]) > 0, r
assert float(r["expected_wall_minutes"]) >= float(r["ttt_minutes"]) * (1 - 1e-9), r
assert 0 < float(r["mfu"]) <= 1, r
assert 0 < float(r["model_tflops_per_gpu"]) <= 1978.9, r   # H100 SXM: at most its dense FP8 peak, 1,978.9 TFLOP/s
assert float(r["rented_gpu_hours"]) >= float(r["gpu_hours"]) * (1 - 1e-9), r
assert r["gradient_reduction"] in ("overlapped", "after_backward"), r
assert 0 < float(r["memory_per_gpu_gb"]) <= float(r["memory_capacity_gb"]) and r["memory_fits"] == "true", r
assert r["layout_choice"].startswith("fastest of "), r["layout_choice"]
assert float(r["published_layout_minutes"]) >= float(r["ttt_minutes"]) * (1 - 1e-9), r
PY'

# --- predict --model operator: the trace of the searched layout, layer by layer, TP/CP collectives on their row ---
# (without pipelining: a pipelined step's trace has a row per stage, checked in tests/unit/test_pipeline_training.cpp)
"$ttsim" predict --workload llama2_70b_lora --system dgx-h100 --gpus 64 --model operator --layout pp=1 --out "$tmp/lora" \
  >"$tmp/lora.txt"; rc=$?
check "predict --model operator --out exits 0" '[[ $rc -eq 0 ]]'
check "operator trace: under 20 MB, one row per stream, the step ends at the predicted step time" 'python3 - "$tmp/lora" <<"PY"
import json, os, sys
d = sys.argv[1]
assert os.path.getsize(d + "/trace.json") < 20e6, os.path.getsize(d + "/trace.json")
j = json.load(open(d + "/results.json"))
t = json.load(open(d + "/trace.json"))
threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in t["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"}
assert {"compute", "comm", "tp/cp comm", "eval"} <= set(threads.values()), threads
spans = [e for e in t["traceEvents"] if e["ph"] == "X" and e["pid"] == 0]
end = max(e["ts"] + e["dur"] for e in spans if threads[(0, e["tid"])] != "eval")
assert abs(end - j["step_ms"] * 1e3) <= 1e-6 * end + 1e-3, (end, j["step_ms"])
for row in ("comm", "tp/cp comm"):   # every gradient bucket and every TP/CP collective, with bytes and algorithm
    named = [e for e in spans if threads[(0, e["tid"])] == row and e["name"] != "param allgather"]
    assert named and all("bytes" in e["args"] and "algorithm" in e["args"] for e in named), row
layers = [e for e in spans if threads[(0, e["tid"])] == "compute" and "kernel names" in e.get("args", {})]
assert len(layers) >= 2 * 82, len(layers)
PY'

# --- predict --price: cost = GPU-hours x price, the time unchanged; the same figures as a plan row --------------
# shellcheck disable=SC2086
"$ttsim" $pred --price 10 --format json >"$tmp/predict10.json"
# shellcheck disable=SC2086
"$ttsim" $pred --price dgx-h100=1.5 --format json >"$tmp/predict15.json"
"$ttsim" plan --workload bert --system dgx-h100 --deadline 10min --min-gpus 64 --max-gpus 64 --price 10 --format json \
  >"$tmp/plan64.json"
check "predict --price changes the cost and not the time; a plan row at 64 GPUs agrees" \
  'python3 - "$tmp/predict.json" "$tmp/predict10.json" "$tmp/predict15.json" "$tmp/plan64.json" <<"PY"
import json, sys
base, ten, one5, plan = (json.load(open(f)) for f in sys.argv[1:])
assert ten["ttt_minutes"] == base["ttt_minutes"] and ten["gpu_hours"] == base["gpu_hours"]
assert ten["energy_kwh"] == base["energy_kwh"]
assert ten["cost"]["price_per_gpu_hour"] == 10 and not ten["cost"]["price_is_estimate"]
assert abs(ten["cost"]["amount"] - 10 * ten["gpu_hours"]) < 1e-9 * ten["cost"]["amount"]
assert abs(one5["cost"]["amount"] - 1.5 * base["gpu_hours"]) < 1e-9 * one5["cost"]["amount"]
assert base["cost"]["price_is_estimate"] and base["cost"]["amount"] != ten["cost"]["amount"]
row = plan["answer"]
assert row["gpus"] == 64, row
assert abs(row["cost"] - ten["cost"]["amount"]) < 1e-9 * row["cost"], (row["cost"], ten["cost"])
assert abs(row["energy_kwh"] - ten["energy_kwh"]["total"]) < 1e-9 * row["energy_kwh"]
PY'
# shellcheck disable=SC2086
"$ttsim" $pred --price dgx-b200=5 >/dev/null 2>"$tmp/price.err"; rc=$?
check "predict --price for another system exits 2 naming --price" '[[ $rc -eq 2 ]] && grep -q -- "--price" "$tmp/price.err"'

# --- plan --out DIR ----------------------------------------------------------------------------------------------
"$ttsim" plan --workload bert --system dgx-h100 --deadline 2min --max-gpus 256 --format json >"$tmp/plan.json"
"$ttsim" plan --workload bert --system dgx-h100 --deadline 2min --max-gpus 256 --out "$tmp/plan" >/dev/null; rc=$?
check "plan --out exits 0 and writes results.csv and results.json (= stdout JSON)" \
  '[[ $rc -eq 0 && -s $tmp/plan/results.csv ]] && cmp -s "$tmp/plan.json" "$tmp/plan/results.json"'
check "plan results.csv parses, one row per evaluated configuration" 'python3 - "$tmp/plan" <<"PY"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1] + "/results.csv")))
j = json.load(open(sys.argv[1] + "/results.json"))
best = [r for r in rows if r["answer"] == "true"]
assert len(best) == 1 and int(best[0]["gpus"]) == j["answer"]["gpus"], best
assert abs(float(best[0]["cost"]) - j["answer"]["cost"]) <= 1e-7 * j["answer"]["cost"]
PY'

# --- collective --out DIR (with or without a trailing slash) -----------------------------------------------------
coll="collective --gpus 16 --max-size 8MiB"
# shellcheck disable=SC2086
"$ttsim" $coll --format json >"$tmp/coll.json"
# shellcheck disable=SC2086
"$ttsim" $coll --format csv >"$tmp/coll.csv"
# shellcheck disable=SC2086
"$ttsim" $coll --out "$tmp/coll/" >"$tmp/coll.txt"; rc=$?
check "collective --out DIR/ exits 0 and writes results.csv and results.json" \
  '[[ $rc -eq 0 ]] && cmp -s "$tmp/coll.json" "$tmp/coll/results.json" && cmp -s "$tmp/coll.csv" "$tmp/coll/results.csv"'
check "collective --out DIR/ makes no file named after the slash" '[[ $(ls -A "$tmp/coll" | tr "\n" " ") == "report.html results.csv results.json " ]]'
# shellcheck disable=SC2086
"$ttsim" $coll --out "$tmp/coll2" >/dev/null; rc=$?
check "collective --out DIR (no slash) is the same folder contract" '[[ $rc -eq 0 ]] && cmp -s "$tmp/coll.json" "$tmp/coll2/results.json"'

# --- run (collective and plan scenarios) -------------------------------------------------------------------------
"$ttsim" run scenarios/collective-h100-nvls.yaml --format json >"$tmp/nvls.json"
"$ttsim" run scenarios/collective-h100-nvls.yaml --out "$tmp/nvls" >/dev/null; rc=$?
check "run collective --out: results.json = stdout JSON" '[[ $rc -eq 0 ]] && cmp -s "$tmp/nvls.json" "$tmp/nvls/results.json"'
"$ttsim" run scenarios/plan-deadline-bert.yaml --format json >"$tmp/planrun.json"
"$ttsim" run scenarios/plan-deadline-bert.yaml --out "$tmp/planrun" >/dev/null; rc=$?
check "run plan --out: results.json = stdout JSON" '[[ $rc -eq 0 ]] && cmp -s "$tmp/planrun.json" "$tmp/planrun/results.json"'

# --- a regular file as --out: exit 2 naming --out, the file untouched, nothing else written ---------------------
echo "keep me" >"$tmp/file"
for cmd in "$pred" "$coll" "plan --workload bert --system dgx-h100 --deadline 2min --max-gpus 64" \
           "run scenarios/collective-h100-nvls.yaml" "run scenarios/plan-deadline-bert.yaml"; do
  # shellcheck disable=SC2086
  "$ttsim" $cmd --out "$tmp/file" >/dev/null 2>"$tmp/file.err"; rc=$?
  check "$cmd --out FILE exits 2 naming --out" '[[ $rc -eq 2 ]] && grep -q -- "--out.*is a file; --out names a folder" "$tmp/file.err"'
  check "$cmd --out FILE leaves the file alone" '[[ $(cat "$tmp/file") == "keep me" ]] && [[ -z $(ls "$tmp" | grep "^file\.tmp") ]]'
done

# --- a failed run leaves no folder -------------------------------------------------------------------------------
"$ttsim" predict --workload bert --system dgx-h100 --gpus 64 --tp 3 --out "$tmp/none1/sub" >/dev/null 2>&1; rc=$?
check "predict with bad input: exit 2, no folder" '[[ $rc -eq 2 && ! -e $tmp/none1 ]]'
"$ttsim" collective --topology /dev/zero --out "$tmp/none2" >/dev/null 2>&1; rc=$?
check "collective with a bad topology: exit 2, no folder" '[[ $rc -eq 2 && ! -e $tmp/none2 ]]'

# --- nccl-tests columns and the average line ---------------------------------------------------------------------
check "collective table has nccl-tests' columns" \
  'grep -q "^#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong" "$tmp/coll.txt" && grep -q "out-of-place  *in-place" "$tmp/coll.txt"'
check "each row: size count float sum -1, in-place = out-of-place; Avg = mean busbw (%g), = JSON avg_busbw_gbps" \
  'python3 - "$tmp/coll.txt" "$tmp/coll.json" <<"PY"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
rows = [l.split() for l in lines if l and not l.startswith("#")]
j = json.load(open(sys.argv[2]))
assert len(rows) == len(j["results"]) == 4, rows
for f, r in zip(rows, j["results"]):
    assert int(f[0]) == r["bytes"] and int(f[1]) == r["bytes"] // 4 == r["count"], f
    assert f[2:5] == ["float", "sum", "-1"], f
    assert f[5:9] == f[9:13] and f[8] == "N/A", f
    assert abs(float(f[7]) - r["busbw_gbps"]) <= 0.005, (f, r)
mean = sum(r["busbw_gbps"] for r in j["results"]) / len(j["results"])
avg = [l for l in lines if l.startswith("# Avg bus bandwidth    : ")]
assert avg == ["# Avg bus bandwidth    : %g" % mean], (avg, mean)
assert abs(j["avg_busbw_gbps"] - mean) < 1e-9 * mean
assert lines[-1] == "#"
PY'
"$ttsim" collective --gpus 8 --op broadcast --max-size 2MiB >"$tmp/bcast.txt"
check "broadcast rows: redop none, root 0" '[[ $(grep -v "^#" "$tmp/bcast.txt" | awk "{print \$4, \$5}" | sort -u) == "none 0" ]]'
"$ttsim" collective --help >"$tmp/coll_help.txt"
check "collective --help says in-place = out-of-place and names the Avg line" \
  'grep -q "in-place" "$tmp/coll_help.txt" && grep -q "Avg bus bandwidth" "$tmp/coll_help.txt"'

# --- streaming: rows reach a pipe while the sweep is still running ------------------------------------------------
# All-to-all at 2,048 GPUs under static ECMP takes ~0.4 s of CPU per size up to 1TiB (tests/cli/long_collective.yaml):
# the first rows must arrive on the pipe long before the last size; the reader then kills the run (SIGKILL, so
# nothing but what was already flushed can arrive).
check "collective rows are streamed (flushed as each size finishes)" 'python3 - "$ttsim" <<"PY"
import subprocess, sys, time
p = subprocess.Popen([sys.argv[1], "collective", "--gpus", "2048", "--routing", "static", "--op", "alltoall",
                      "--min-size", "1MiB", "--max-size", "1TiB"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
rows = 0
deadline = time.time() + 120
while rows < 2 and time.time() < deadline:
    line = p.stdout.readline()
    if not line:
        break
    if not line.startswith(b"#"):
        rows += 1
still_running = p.poll() is None
p.kill()
p.wait()
assert rows == 2, rows
assert still_running, "the command had ended: nothing shows the rows were streamed"
PY'
for fmt in table csv; do
  "$ttsim" collective --gpus 16 --max-size 64MiB --format $fmt 2>"$tmp/bar.err" | cat >/dev/null
  check "no progress bar when stderr is not a terminal ($fmt)" '[[ ! -s $tmp/bar.err ]]'
done

# On a terminal (script(1) gives the run a pseudo-terminal): a bar once the run has taken a second, erased before
# each row; a quick run draws none.
script -qec "timeout -s INT 4 $ttsim collective --gpus 2048 --routing static --op alltoall --min-size 1MiB --max-size 1TiB" \
  /dev/null >"$tmp/tty.txt" 2>&1
check "a long collective sweep draws a progress bar on a terminal" 'grep -aq "alltoall \[#*\.*\] [0-9]*/21 sizes" "$tmp/tty.txt"'
script -qec "$ttsim collective --gpus 8 --max-size 4MiB" /dev/null >"$tmp/tty-quick.txt" 2>&1
check "a quick collective sweep draws no bar on a terminal" '! grep -aq "sizes *$(printf "\r")*$" "$tmp/tty-quick.txt" && ! grep -aq "\[#" "$tmp/tty-quick.txt"'

echo "output contract: $fail failed"
[[ $fail -eq 0 ]]
