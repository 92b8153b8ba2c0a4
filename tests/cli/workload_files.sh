#!/usr/bin/env bash
# A user model's YAML file where a workload name goes: `predict --workload FILE` and `plan --workload FILE` (a
# user-model scenario's model:, or the model mapping itself), and a plan scenario's `model:` mapping. Each answers
# with a layout, GPUs and cost; mistakes are refused with exit 2 naming the flag, or the file, line and key.
source "$(dirname "$0")/lib/eval_checks.bash"
has() { grep -qF -- "$2" "$1"; }
bad=tests/cli/workload_files

# predict: a shipped user-model scenario's model, at its fastest layout.
"$ttsim" predict --workload scenarios/llama3.1-70b.yaml --system dgx-h100 --gpus 1024 --format json >"$tmp/p.json"; rc=$?
check "predict --workload FILE exits 0" '[[ $rc -eq 0 ]]'
check "predict --workload FILE: the model's name, a searched layout, a finite time" \
  'python3 -c "import json,sys; j=json.load(open(sys.argv[1])); assert j[\"workload\"] == \"llama3.1-70b\" and j[\"layout_choice\"] and 0 < j[\"ttt_minutes\"] < 1e7 and j[\"global_batch\"] == 512" "$tmp/p.json"'
"$ttsim" predict --workload scenarios/llama3.1-70b.yaml --system dgx-h100 --gpus 1024 >"$tmp/p.txt"
check "predict --workload FILE: the comparison is the Megatron layout, not a published one" \
  'has "$tmp/p.txt" "Megatron layout" && ! has "$tmp/p.txt" "published layout"'

# The model mapping itself (no scenario around it) is taken as well: the 7B scenario's model, written out alone.
python3 - "$tmp/model.yaml" <<'PY'
import sys
lines = open("scenarios/custom-decoder-7b.yaml").read().splitlines()
start = next(i for i, l in enumerate(lines) if l.startswith("model:"))
body = []
for l in lines[start + 1:]:
    if l and not l.startswith(" "):
        break
    body.append(l[2:])
open(sys.argv[1], "w").write("\n".join(body) + "\n")
PY
"$ttsim" predict --workload "$tmp/model.yaml" --system dgx-h100 --gpus 64 >"$tmp/m.txt"; rc=$?
check "predict --workload on a bare model mapping exits 0" '[[ $rc -eq 0 ]] && has "$tmp/m.txt" "time to train"'

# plan --workload FILE --deadline 14d: the fewest GPUs, with the layout and the cost.
"$ttsim" plan --workload scenarios/plan-deadline-70b.yaml --system dgx-h100 --deadline 14d --min-gpus 512 \
  --max-gpus 4096 >"$tmp/plan.txt"; rc=$?
check "plan --workload FILE --deadline 14d exits 0" '[[ $rc -eq 0 ]]'
check "plan --workload FILE: answers with GPUs, a layout and a cost" \
  'grep -q "answer: .*GPUs" "$tmp/plan.txt" && grep -q "^    layout: TP " "$tmp/plan.txt" && grep -q "(judged): .* d, .* USD" "$tmp/plan.txt"'
# The CLI and the plan scenario's model: give the same answer.
"$ttsim" run scenarios/plan-deadline-70b.yaml >"$tmp/scenario.txt"
check "plan scenario model: and plan --workload FILE agree" \
  'diff <(grep -A3 "answer:" "$tmp/plan.txt") <(grep -A3 "answer:" "$tmp/scenario.txt") >/dev/null'

# Refusals: exit 2, the flag or the file:line:key named.
refused() {   # NAME EXPECTED_TEXT COMMAND...
  local name=$1 text=$2; shift 2
  "$@" >"$tmp/out.txt" 2>"$tmp/err.txt"; local rc=$?
  check "$name: exit 2" "[[ $rc -eq 2 ]]"
  check "$name: says '$text'" "has \"$tmp/err.txt\" \"$text\""
}
refused "a missing model file" "'--workload': no-such-model.yaml: cannot open file: no such file" \
  "$ttsim" predict --workload no-such-model.yaml --system dgx-h100 --gpus 64
refused "a mistake inside the model file" "$bad/bad-model.yaml:7" \
  "$ttsim" predict --workload "$bad/bad-model.yaml" --system dgx-h100 --gpus 64
refused "a user model with the lumped model" "'--model': a user model is priced by the operator model" \
  "$ttsim" plan --workload scenarios/plan-deadline-70b.yaml --model lumped --deadline 14d
refused "a user model with the published layout" "'--layout': a user model has no published layout" \
  "$ttsim" plan --workload scenarios/plan-deadline-70b.yaml --layout published --deadline 14d
refused "a plan scenario with workload and model:" "give workload or a user model's model:, not both" \
  "$ttsim" run "$bad/plan-both.yaml"
refused "a plan scenario's batch beside a user model" "$bad/plan-batch.yaml:9" \
  "$ttsim" run "$bad/plan-batch.yaml"
refused "an unknown workload" "or a user model's YAML file" "$ttsim" predict --workload gpt4 --system dgx-h100 --gpus 8
# Over memory: the refusal names what is over and the smallest change the search could not make here. 405B on 64
# GPUs: its model state alone is over at every depth the blocks allow, so more stages (a depth they divide) or the
# distributed optimizer over more ranks; never more TP, which is at the 8-GPU NVLink domain already.
refused "405B on 64 GPUs: the model state is over" "the weights, gradients and optimizer state of its layers alone are" \
  "$ttsim" predict --workload scenarios/llama3.1-405b.yaml --system dgx-h100 --gpus 64
check "405B on 64 GPUs: more stages, at a depth the 126 blocks take, and the GPUs that needs" \
  'has "$tmp/err.txt" "more pipeline stages (PP 14 or more, from 8: at TP 8 x CP 1 that is at least 112 GPUs per replica)"'
check "405B on 64 GPUs: the distributed optimizer, which takes more GPUs; no larger TP" \
  'has "$tmp/err.txt" "the distributed optimizer over data-parallel ranks, which takes more GPUs" && ! has "$tmp/err.txt" "tensor parallelism"'
# Activations over at a pinned micro batch: fewer tokens per micro batch, recomputation, TP within the domain.
refused "8B pinned at micro batch 4 on one GPU per replica: the activations are over" "its activations are" \
  "$ttsim" predict --workload scenarios/llama3.1-8b.yaml --system dgx-h100 --gpus 8 --layout tp=1,cp=1,pp=1,micro=4,recompute=none
check "8B: fewer tokens per micro batch, full recomputation, more TP of the domain" \
  'has "$tmp/err.txt" "fewer samples (tokens) per micro batch; full recomputation; more tensor parallelism (TP 1 of the 8-GPU NVLink domain"'
# A published layout over memory (not searched) is explained the same way, with the search named as a change; the
# reserve is what the request set. No "larger TP or CP": the 8-GPU NVLink domain may have no larger one.
refused "LoRA's published layout under a 60 GB reserve" "'--memory-reserve': the layout does not fit in memory" \
  "$ttsim" predict --workload llama2_70b_lora --system dgx-h100 --gpus 8 --layout published --memory-reserve 60GB
check "LoRA's published layout: what is over, with figures, and the changes" \
  'has "$tmp/err.txt" "its activations are 50.5 GB beside 17.4 GB of model state, 25.5 GB left after the reserve; to fit: keep less memory free; let the layout search choose"'
check "LoRA's published layout: no 'larger TP or CP'" '! has "$tmp/err.txt" "a larger TP or CP"'
refused "a user model with the lumped model (predict)" "'--model': a user model is priced by the operator model" \
  "$ttsim" predict --workload scenarios/llama3.1-70b.yaml --system dgx-h100 --gpus 64 --model lumped

# Pipeline schedules from --layout: GPipe runs where pinned (its bubble is 1F1B's, its memory every micro batch's
# activations); an unknown one is refused naming --layout.
"$ttsim" predict --workload scenarios/gpt3-175b-300b-tokens.yaml --system dgx-h100 --gpus 512 \
  --layout tp=8,pp=8,cp=1,micro=1,schedule=gpipe >"$tmp/gpipe.txt"; rc=$?
check "schedule=gpipe: exit 0, the layout says GPipe" '[[ $rc -eq 0 ]] && grep -q "^  layout  .*PP 8 GPipe" "$tmp/gpipe.txt"'
# Without recomputation GPipe's 192 micro batches in flight do not fit; the refusal offers 1F1B's 8.
"$ttsim" predict --workload scenarios/gpt3-175b-300b-tokens.yaml --system dgx-h100 --gpus 512 \
  --layout tp=8,pp=8,cp=1,micro=1,schedule=gpipe,recompute=none >/dev/null 2>"$tmp/gpipe-over.err"; rc=$?
check "schedule=gpipe over memory: exit 2, 1F1B offered" '[[ $rc -eq 2 ]] && grep -q "the 1F1B schedule (8 micro batches in flight instead of 192)" "$tmp/gpipe-over.err"'
"$ttsim" predict --workload scenarios/gpt3-175b-300b-tokens.yaml --system dgx-h100 --gpus 512 \
  --layout tp=8,pp=8,cp=1,micro=1,schedule=gpipe --format json >"$tmp/gpipe.json"
check "schedule=gpipe: the JSON layout names it" \
  'python3 -c "import json,sys; assert json.load(open(sys.argv[1]))[\"layout\"][\"schedule\"] == \"gpipe\"" "$tmp/gpipe.json"'
refused "schedule=foo" "'--layout': schedule must be gpipe, 1f1b or interleaved, not 'foo'" \
  "$ttsim" predict --workload scenarios/gpt3-175b-300b-tokens.yaml --system dgx-h100 --gpus 512 --layout tp=8,pp=8,schedule=foo
# A scenario's layout: map takes the key too, checked at its file, line and key.
sed 's/^layout: {tp: 4, pp: 8, vp: 6, micro: 1}$/layout: {tp: 4, pp: 8, micro: 1, schedule: foo}/' \
  scenarios/gpt3-175b-300b-tokens.yaml >"$tmp/gpt3-foo.yaml"
refused "a scenario's layout: schedule: foo" "gpt3-foo.yaml:33" "$ttsim" run "$tmp/gpt3-foo.yaml"
check "a scenario's layout: schedule: foo names the choices" 'has "$tmp/err.txt" "gpipe" && has "$tmp/err.txt" "1f1b"'
exit $((fail > 0))
