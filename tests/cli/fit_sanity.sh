#!/usr/bin/env bash
# A fit physics forbids is refused (models/calibration/fit_sanity.hpp): RetinaNet's v4.1 H100 results at 4-64 GPUs
# with the 32- and 64-GPU scores made as slow as the 8-GPU one (a submitter whose large runs lag) make the lumped
# fit stretch every step by a straggler term that grows with the GPU count (a step-time spread of about 30 %):
# `calibrate` exits 2, names the broken rule and the likely outliers (the 32-GPU result first), and writes nothing.
# The unmodified results pass and are written.
source "$(dirname "$0")/lib/eval_checks.bash"
python3 - models/data/mlperf/v4.1_results.csv "$tmp/good.csv" "$tmp/flat.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
keep = [r for r in rows if r["benchmark"] == "ssd" and r["accelerator"].startswith("NVIDIA H100-SXM")
        and int(r["n_accelerators"]) <= 64]
eight = min(float(r["ttt_minutes_official_scaled"]) for r in keep if int(r["n_accelerators"]) == 8)
for name, flat in ((sys.argv[2], False), (sys.argv[3], True)):
    with open(name, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=rows[0].keys())
        w.writeheader()
        for r in keep:
            r = dict(r)
            if flat and int(r["n_accelerators"]) >= 32:
                for key in ("ttt_minutes_olympic", "ttt_minutes_official_scaled", "official_summarizer_score"):
                    r[key] = "%.4f" % eight
            w.writerow(r)
PY
head -1 models/data/mlperf/v4.1_runs.csv >"$tmp/runs.csv"   # no run logs: the scores alone

"$ttsim" calibrate --data "$tmp/flat.csv" --runs "$tmp/runs.csv" --model lumped --out "$tmp/flat_out" \
    >"$tmp/flat.txt" 2>"$tmp/flat.err"; rc=$?
check "a fit whose large runs lag exits 2" '[[ $rc -eq 2 ]]'
check "it names the broken rule and cell" 'grep -q "compute at scale (retinanet on H100-SXM): compute per sample at 64 GPUs is .* over 8 GPUs" "$tmp/flat.err"'
check "it names the likely outliers, the slowed 32-GPU result first" 'grep -m1 "likely outlier" "$tmp/flat.err" | grep -q "retinanet on 32 GPUs"'
check "it writes nothing" '[[ ! -e "$tmp/flat_out" ]]'

"$ttsim" calibrate --data "$tmp/good.csv" --runs "$tmp/runs.csv" --model lumped --out "$tmp/good_out" \
    >"$tmp/good.txt" 2>&1; rc=$?
check "the published results pass and are written" '[[ $rc -eq 0 && -s "$tmp/good_out/profiles.yaml" ]]'
check "the report says the sanity held" 'grep -q "sanity (fit_sanity.hpp): ranges, compute at scale and 8 -> 64 GPU speedup bounds hold" "$tmp/good.txt"'
[[ $fail -eq 0 ]] || { cat "$tmp/flat.err" "$tmp/good.txt"; exit 1; }
