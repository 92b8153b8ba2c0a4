#!/usr/bin/env bash
# A planner's own measured runs (`ttsim calibrate --data FILE` in the user-runs format, docs/user-runs.md):
# calibrating on the shipped example (BERT on DGX H100 at 8-64 GPUs, step times from the v4.1 run logs) and
# predicting 4,096 GPUs gives a finite, sane figure; the held-out 3,472-GPU row is predicted with its error
# printed; malformed files are refused naming FILE:LINE and the column (exit 2); `predict --like` uses a fitted
# stack offset and refuses a profile set without offsets.
source "$(dirname "$0")/lib/eval_checks.bash"
has() { grep -qF -- "$2" "$1"; }
example=examples/my-runs-bert-h100.csv
# The N-th "err%" figure of the held-out 3,472-GPU row: 1 = step time, 2 = time to train.
held_out_error() { awk '$5 == 3472 { n = 0; for (i = 1; i <= NF; ++i) if ($i ~ /^[+-][0-9.]+$/) { ++n; if (n == '"$2"') print $i } }' "$1"; }
abs_below() { awk -v x="$1" -v m="$2" 'BEGIN { exit !((x < 0 ? -x : x) < m) }'; }

for model in lumped operator; do
    "$ttsim" calibrate --data "$example" --max-gpus 64 --model "$model" --out "$tmp/$model" >"$tmp/$model.txt" 2>&1; rc=$?
    check "$model: calibrate on the example exits 0" '[[ $rc -eq 0 ]]'
    check "$model: writes its profile file" '[[ -s "$tmp/$model/profiles.yaml" || -s "$tmp/$model/operator_profiles.yaml" ]]'
    check "$model: 8 rows fitted, the 3,472-GPU row held out" '[[ $(grep -c " bert  *H100-SXM " "$tmp/$model.txt") -eq 9 ]] && has "$tmp/$model.txt" "held out (more than 64 GPUs; not fitted)"'
    check "$model: says the run terms were not fitted" 'has "$tmp/$model.txt" "note: only step times measured: the time-to-train terms"'
    step=$(held_out_error "$tmp/$model.txt" 1); ttt=$(held_out_error "$tmp/$model.txt" 2)
    echo "$model: held-out 3472-GPU step-time error ${step}%, time-to-train error ${ttt}%"
    check "$model: held-out errors printed" '[[ -n "$step" && -n "$ttt" ]]'
    "$ttsim" predict --workload bert --system dgx-h100 --gpus 4096 --model "$model" --profiles "$tmp/$model" --format json >"$tmp/p.json"; rc=$?
    minutes=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["ttt_minutes"])' "$tmp/p.json" 2>/dev/null)
    echo "$model: predicted 4096-GPU time to train ${minutes} min"
    check "$model: 4,096 GPUs predicted, a finite figure between 3 s and 5 min" '[[ $rc -eq 0 ]] && awk -v m="$minutes" "BEGIN { exit !(m > 0.05 && m < 5) }"'
done
# Regression guards at what the example reaches (operator -20.6 % step / -7.8 % TTT: the fit holds the shipped
# physics, fitted on every round, and moves each label's stack offset and BERT's fixed step cost; lumped 15.5 % /
# 14.5 %). The 3,472-GPU
# layout runs its submission's facts (fp16 GEMMs, no TE FP8; the MLM head on every token; DistributedFusedLAMB with
# five overlapped blocks), which the eight small rows never exercise, so these figures are guards, not accuracy
# claims.
check "operator: held-out step time within 21%" 'abs_below "$(held_out_error "$tmp/operator.txt" 1)" 21'
check "lumped: held-out step time within 20%" 'abs_below "$(held_out_error "$tmp/lumped.txt" 1)" 20'

# The fit switches apply to either model (the model is --model's).
"$ttsim" calibrate --data "$example" --shared robust,step-logs --out "$tmp/listed" >"$tmp/listed.txt" 2>&1; rc=$?
check "--shared robust,step-logs fits under the default (operator) model" '[[ $rc -eq 0 && -s "$tmp/listed/operator_profiles.yaml" ]]'

# The format is told apart by the header; --runs belongs to the v4.1 format.
"$ttsim" calibrate --data "$example" --runs models/data/mlperf/v4.1_runs.csv --out "$tmp/x" >/dev/null 2>"$tmp/err"; rc=$?
check "--runs with a user-runs file: exit 2 naming --runs" '[[ $rc -eq 2 ]] && has "$tmp/err" "--runs"'

# A UTF-8 byte-order mark (Excel's CSV UTF-8) before the header is read past.
printf '\xef\xbb\xbfworkload,system,gpus,global_batch,step_time\nbert,dgx-h100,8,768,98ms\nbert,dgx-h100,16,768,60ms\n' >"$tmp/bom.csv"
"$ttsim" calibrate --data "$tmp/bom.csv" --model lumped --out "$tmp/bom" >/dev/null 2>"$tmp/err"; rc=$?
check "a byte-order mark before the header: read (exit 0)" '[[ $rc -eq 0 ]]'

# Malformed files: exit 2, FILE:LINE and the column, nothing written.
header="workload,system,gpus,global_batch,tp,cp,micro,accumulation,distributed_optimizer,step_time,label"
bad() {   # NAME EXPECTED_LOCATION EXPECTED_TEXT CSV_TEXT
    local where=$2 text=$3
    printf '%s\n' "$4" >"$tmp/bad.csv"
    "$ttsim" calibrate --data "$tmp/bad.csv" --out "$tmp/bad" >/dev/null 2>"$tmp/err"; rc=$?
    check "$1: exit 2" '[[ $rc -eq 2 ]]'
    check "$1: names $where" 'has "$tmp/err" "$tmp/bad.csv:$where"'
    check "$1: says '$text'" 'has "$tmp/err" "$text"'
    check "$1: writes nothing" '[[ ! -e "$tmp/bad" ]]'
}
bad "unknown column" "1: 'gpu_count'" "unknown column" "workload,system,gpu_count,global_batch,step_time"
bad "missing column" "1: 'global_batch'" "missing required column" "workload,system,gpus,step_time"
bad "no measurement column" "1: 'step_time'" "missing the measurement" "workload,system,gpus,global_batch"
bad "column twice" "1: 'gpus'" "column given twice" "workload,system,gpus,gpus,global_batch,step_time"
bad "empty file" "1:" "empty file" ""
bad "header only" "1:" "no runs after the header" "$header"
bad "header repeated" "3:" "the header again" "$header
bert,dgx-h100,8,768,,,,,,98ms,
$header"
bad "bad unit" "2: 'step_time'" "" "$header
bert,dgx-h100,8,768,,,,,,98 parsecs,"
bad "bare number" "2: 'step_time'" "" "$header
bert,dgx-h100,8,768,,,,,,98,"
bad "unknown workload" "2: 'workload'" "" "$header
gpt5,dgx-h100,8,768,,,,,,98ms,"
bad "unknown system" "2: 'system'" "" "$header
bert,dgx-z900,8,768,,,,,,98ms,"
bad "TP does not divide the GPUs" "2: 'tp'" "not divisible" "$header
bert,dgx-h100,16,768,3,,,,,98ms,"
bad "GPUs not whole nodes" "2: 'gpus'" "not a whole number of dgx-h100 nodes" "$header
bert,dgx-h100,12,768,,,,,,98ms,"
bad "batch does not divide" "2: 'global_batch'" "not divisible" "$header
bert,dgx-h100,8,766,,,,,,98ms,"
bad "micro does not divide" "2: 'micro'" "does not divide" "$header
bert,dgx-h100,8,768,,,7,,,98ms,"
bad "micro x accumulation" "2: 'micro'" "is not the global batch" "$header
bert,dgx-h100,8,768,,,48,4,,98ms,"
bad "over HBM" "2: 'tp'" "GB of HBM" "$header
llama2_70b_lora,dgx-h100,8,8,1,1,,,,3s,"
bad "activations over HBM" "2: 'micro'" "this layout does not fit in HBM" "$header
llama2_70b_lora,dgx-h100,8,32,4,1,8,,,3s,"
bad "step faster than the peak" "2: 'step_time'" "below the step's FLOPs at the GPUs' peak" "$header
bert,dgx-h100,8,768,,,,,,98us,"
bad "time to train faster than the peak" "2: 'time_to_train'" "steps at the GPUs' peak" "workload,system,gpus,global_batch,time_to_train
bert,dgx-h100,8,768,5.8ms"
bad "zero GPUs" "2: 'gpus'" "whole number" "$header
bert,dgx-h100,0,768,,,,,,98ms,"
bad "distributed optimizer word" "2: 'distributed_optimizer'" "on or off" "$header
bert,dgx-h100,8,768,,,,,yes,98ms,"
bad "nothing measured" "2: 'step_time'" "neither step_time nor time_to_train" "$header
bert,dgx-h100,8,768,,,,,,,"
bad "label without a slash" "2: 'label'" "SUBMITTER/SYSTEM" "$header
bert,dgx-h100,8,768,,,,,,98ms,mylab"
bad "too few fields" "2:" "fields, the header has" "$header
bert,dgx-h100,8,768"

# --like: the shipped profiles carry offsets (one per software stack the fit saw): a named stack answers; a profile
# set without them (here the shipped one with its stacks cut off) says how to get them.
"$ttsim" predict --workload bert --system dgx-h100 --gpus 512 --model operator --like NVIDIA/eos_n8_ngc23.04_pytorch >"$tmp/like_shipped.txt" 2>&1; rc=$?
check "--like on the shipped profiles: answers and notes the offset" '[[ $rc -eq 0 ]] && has "$tmp/like_shipped.txt" "speed offset"'
mkdir -p "$tmp/nostacks" && sed '/^stacks:/,$d' models/profiles/operator_profiles.yaml >"$tmp/nostacks/operator_profiles.yaml"
"$ttsim" predict --workload bert --system dgx-h100 --gpus 512 --model operator --profiles "$tmp/nostacks" --like NVIDIA/eos_n8_ngc23.04_pytorch >/dev/null 2>"$tmp/err"; rc=$?
check "--like on profiles without offsets: exit 2" '[[ $rc -eq 2 ]]'
check "--like on profiles without offsets: says why and how" 'has "$tmp/err" "'"'"'--like'"'"'" && has "$tmp/err" "no per-system speed offsets" && has "$tmp/err" "ttsim calibrate --model operator"'
# Offsets fitted from the example's labels: a named stack moves the prediction, an unknown name lists the valid ones.
"$ttsim" calibrate --data "$example" --max-gpus 64 --model operator --out "$tmp/stacks" >/dev/null 2>&1
check "the operator fit writes stacks" 'grep -q "^stacks:" "$tmp/stacks/operator_profiles.yaml"'
ttt() { "$ttsim" predict --workload bert --system dgx-h100 --gpus 512 --model operator --profiles "$tmp/stacks" --format json "$@" | python3 -c 'import json,sys; print(json.load(sys.stdin)["ttt_minutes"])'; }
pooled=$(ttt); nvidia=$(ttt --like NVIDIA/eos_n8_ngc23.04_pytorch); lambda=$(ttt --like Lambda/lambda_1cc_n8_H100-SXM-80GB_ngc24.04_nemo)
stack=$(ttt --like NVIDIA/H100-SXM)
echo "--like at 512 GPUs: pooled $pooled, NVIDIA $nvidia, Lambda $lambda min"
check "--like: the NVIDIA and Lambda stacks differ from the pooled value and each other" '[[ -n "$pooled" && "$nvidia" != "$pooled" && "$lambda" != "$pooled" && "$nvidia" != "$lambda" ]]'
check "--like: a v4.1 system name and its stack agree" '[[ "$nvidia" == "$stack" ]]'
"$ttsim" predict --workload bert --system dgx-h100 --gpus 512 --model operator --profiles "$tmp/stacks" --like Foo/bar >/dev/null 2>"$tmp/err"; rc=$?
check "--like unknown: exit 2 listing the valid names" '[[ $rc -eq 2 ]] && has "$tmp/err" "matches no software stack" && has "$tmp/err" "Lambda/lambda_1cc_n8_H100-SXM-80GB_ngc24.04_nemo"'
"$ttsim" predict --workload bert --system dgx-h100 --gpus 512 --model operator --profiles "$tmp/stacks" --like nvidia >/dev/null 2>"$tmp/err"; rc=$?
check "--like without a slash: exit 2" '[[ $rc -eq 2 ]] && has "$tmp/err" "SUBMITTER/SYSTEM"'

# The same profiles and stack from a sweep and a plan scenario (`profiles:` relative to the file, `like:`) and
# from `plan --profiles/--like`: the sweep's 512-GPU point is predict's figure, and says what like: did.
cp -r "$tmp/stacks" "$tmp/scen_profiles"
cat >"$tmp/like_sweep.yaml" <<YAML
scenario: sweep
name: like a stack
workloads: [bert]
systems: [dgx-h100]
gpus: [512]
model: operator
layout: published
profiles: scen_profiles
like: NVIDIA/eos_n8_ngc23.04_pytorch
YAML
"$ttsim" run "$tmp/like_sweep.yaml" --format json >"$tmp/like_sweep.json"; rc=$?
nvidia_published=$(ttt --layout published --like NVIDIA/eos_n8_ngc23.04_pytorch)
check "sweep with profiles: and like: exits 0" '[[ $rc -eq 0 ]]'
check "sweep like: its point is predict --like's time, and notes the offset" 'python3 - "$tmp/like_sweep.json" "$nvidia_published" <<"PY"
import json, sys
d = json.load(open(sys.argv[1]))
p = [r for r in d["points"] if r.get("gpus") == 512][0]
assert abs(p["ttt_minutes"] / float(sys.argv[2]) - 1) < 1e-9, (p["ttt_minutes"], sys.argv[2])
assert any("speed offset" in n for n in p.get("warnings", [])), p.get("warnings")
PY'
# The v4.1 comparison beside a point prices each published result at its own stack's offset (as validate), so a
# `like:` that moves the point's own time leaves it alone (shipped profiles, which carry the v4.1 stacks).
for like in "" "like: Lambda/H100-SXM"; do
    printf 'scenario: sweep\nname: compare\nworkloads: [bert]\nsystems: [dgx-h100]\ngpus: [8]\nlayout: published\n%s\n' "$like" >"$tmp/compare.yaml"
    "$ttsim" run "$tmp/compare.yaml" --format json >"$tmp/compare${like:+_like}.json"
done
check "sweep like: the point moves, its v4.1 comparison does not" 'python3 - "$tmp/compare.json" "$tmp/compare_like.json" <<"PY"
import json, sys
plain, liked = (json.load(open(f))["points"][0] for f in sys.argv[1:])
assert liked["ttt_minutes"] > plain["ttt_minutes"], (plain["ttt_minutes"], liked["ttt_minutes"])   # Lambda is slower
assert plain["published"]["predicted_minutes"] == liked["published"]["predicted_minutes"], (plain["published"], liked["published"])
PY'
sed 's/^like: .*/like: Foo\/bar/' "$tmp/like_sweep.yaml" >"$tmp/like_bad.yaml"
"$ttsim" run "$tmp/like_bad.yaml" >/dev/null 2>"$tmp/err"; rc=$?
check "sweep like: unknown stack: exit 2 at the key" '[[ $rc -eq 2 ]] && has "$tmp/err" "like_bad.yaml:9" && has "$tmp/err" "matches no software stack"'
"$ttsim" plan --workload bert --system dgx-h100 --deadline 2min --model operator --profiles "$tmp/stacks" --like NVIDIA/eos_n8_ngc23.04_pytorch >"$tmp/like_plan.txt" 2>&1; rc=$?
check "plan --profiles --like answers and notes the offset" '[[ $rc -eq 0 ]] && has "$tmp/like_plan.txt" "speed offset"'

exit $((fail > 0))
