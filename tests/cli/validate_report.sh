#!/usr/bin/env bash
# `ttsim validate`'s report as a user reads it: percentages with two decimals, and its in-sample error at a
# published result is the error `ttsim run` shows for that count (both predict at the published batch and layout).
# Apart from usability.sh because validate refits the whole model for its hold-out (about a minute in Release,
# over 22 minutes under the sanitizers, which leave this test out: tools/ci-sanitize.sh).
source "$(dirname "$0")/lib/eval_checks.bash"

"$ttsim" validate >"$tmp/validate.txt"
check "validate: MAPE with two decimals" '[[ $(grep -c "MAPE" "$tmp/validate.txt") -ge 3 ]] && ! grep -E "MAPE[^%]*[0-9]\.[0-9]{3,}%" "$tmp/validate.txt"'
# The in-sample diagnostics: the mean signed error with its count of slow results, then the MAPE at the published
# convergence; the latter below the in-sample MAPE (the RCPs' convergence is part of that error).
check "validate: in-sample mean signed error and MAPE at the published convergence" 'python3 - "$tmp/validate.txt" <<"PY"
import re, sys
t = open(sys.argv[1]).read()
mape = float(re.search(r"^in-sample MAPE: ([0-9.]+)% over (\d+) results$", t, re.M).group(1))
m = re.search(r"^mean signed error: ([+-][0-9.]+)% \((\d+) of (\d+) results predicted slower than published\)$", t, re.M)
assert m and abs(float(m.group(1))) <= mape and int(m.group(2)) <= int(m.group(3)), m
own = float(re.search(r"^in-sample MAPE with each result.s published mean convergence instead of the RCPs \(diagnostic only\): ([0-9.]+)% over \d+ results$", t, re.M).group(1))
assert own < mape, (own, mape)
PY'

"$ttsim" run scenarios/default.yaml --format json --out "$tmp/default" >"$tmp/default.json"
check "validate's in-sample row = the default scenario's published comparison (BERT, Clemson, 48 GPUs, batch 6912)" 'python3 - "$tmp/default.json" "$tmp/validate.txt" <<"PY"
import json, sys
d = json.load(open(sys.argv[1]))
pub = [p for p in d["points"] if p["status"] == "ok" and p["published"]]
bert48 = [p for p in pub if p["workload"] == "bert" and p["gpus"] == 48][0]
assert bert48["published"]["global_batches"] == [6912], bert48["published"]
row = [l.split() for l in open(sys.argv[2]) if l.split()[:4] == ["bert", "H100-SXM", "48", "6912"]][0]
assert abs(float(row[-2]) - bert48["published"]["predicted_minutes"]) < 6e-5, (row, bert48["published"])
PY'

# The method check's report, with the lumped model (a fit of seconds; the operator model's figures are the unit
# test [method-check]'s): per round its points and MAPE, the in-sample fit of the rounds together, the speedups
# between rounds, and every published result not used with why.
"$ttsim" validate --method-check --model lumped --rounds 4.0,4.1 >"$tmp/method.txt"; rc=$?
check "validate --method-check: each round's MAPE, the in-sample line, the speedups and the results not used" '[[ $rc -eq 0 ]] && grep -q "^v4.0 method MAPE: [0-9.]*% over 8 results, largest error" "$tmp/method.txt" && grep -q "^v4.1 method MAPE: [0-9.]*% over 8 results" "$tmp/method.txt" && grep -q "^in-sample, every round fitted together: MAPE" "$tmp/method.txt" && grep -q "llama2_70b_lora   v4.0 -> v4.1: 1.336x over 8 cells" "$tmp/method.txt" && grep -q "L40S .*not in the GPU catalog" "$tmp/method.txt"'

echo "validate_report: $fail failed"
[[ $fail -eq 0 ]]
