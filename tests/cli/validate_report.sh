#!/usr/bin/env bash
# `ttsim validate`'s report as a user reads it: percentages with two decimals, and its in-sample error at a
# published result is the error `ttsim run` shows for that count (both predict at the published batch and layout).
# Apart from usability.sh because validate refits the whole model for its hold-out (about a minute in Release,
# over 22 minutes under the sanitizers, which leave this test out: tools/ci-sanitize.sh).
source "$(dirname "$0")/lib/eval_checks.bash"

"$ttsim" validate >"$tmp/validate.txt"
check "validate: MAPE with two decimals" '[[ $(grep -c "MAPE" "$tmp/validate.txt") -ge 3 ]] && ! grep -E "MAPE[^%]*[0-9]\.[0-9]{3,}%" "$tmp/validate.txt"'

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

echo "validate_report: $fail failed"
[[ $fail -eq 0 ]]
