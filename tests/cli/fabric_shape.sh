#!/usr/bin/env bash
# The fabric's shape (planes per NIC, switch radix, tiers, spine and super-spine oversubscription, rail-optimised
# leaves) on every command and scenario that
# predicts: the same flags on predict, plan and collective; the same keys in a collective's `cluster:` and in a
# sweep's, plan's or user model's `network:` option. Refusals name the flag or file:line:key and exit 2.
source "$(dirname "$0")/lib/eval_checks.bash"

# Flags: predict, plan and collective take all three, and say so in --help.
for cmd in predict plan collective; do
  "$ttsim" "$cmd" --help >"$tmp/help_$cmd.txt"
  check "$cmd --help lists every shape flag" \
    'for f in "--planes P" "--switch-ports K" "--tiers T" "--spine-oversubscription R" "--superspine-oversubscription R" "--rail-optimized on|off"; do grep -q -- "$f" "$tmp/help_$cmd.txt" || exit 1; done'
done

# A plan on two planes says so, and its JSON carries the shape.
"$ttsim" plan --workload bert --system dgx-h100 --deadline 1min --max-gpus 256 --planes 2 >"$tmp/plan.txt"; rc=$?
check "plan --planes 2 answers and names the planes" '[[ $rc -eq 0 ]] && grep -q "searched dgx-h100 (2 planes)" "$tmp/plan.txt"'
"$ttsim" plan --workload bert --system dgx-h100 --deadline 1min --max-gpus 256 --planes 2 --format json >"$tmp/plan.json"
check "plan JSON carries fabric_shape" 'python3 -c "import json,sys; assert json.load(open(sys.argv[1]))[\"fabric_shape\"] == {\"planes\": 2}" "$tmp/plan.json"'

# Refusals on the command line: exit 2 naming the flag.
refused() {   # NAME FLAG COMMAND...: exit 2 and the flag named on stderr
  local name=$1 flag=$2; shift 2
  "$ttsim" "$@" >/dev/null 2>"$tmp/err"; local rc=$?
  check "$name" '[[ $rc -eq 2 ]] && grep -q -- "--$flag" "$tmp/err"'
}
refused "predict: a radix too small for the GPU count names --switch-ports" switch-ports \
  predict --workload llama2_70b_lora --system dgx-h100 --gpus 16384 --switch-ports 32
refused "predict: an odd radix names --switch-ports" switch-ports \
  predict --workload bert --system dgx-h100 --gpus 64 --switch-ports 33
refused "predict: planes within one NVLink domain names --planes" planes \
  predict --workload bert --system dgx-h100 --gpus 8 --planes 2
refused "collective: a radix too small names --switch-ports" switch-ports \
  collective --system dgx-h100 --gpus 4096 --switch-ports 16 --op allreduce --min-size 1MiB --max-size 1MiB
refused "plan: a radix that holds none of the range names --switch-ports" switch-ports \
  plan --workload bert --system dgx-h100 --deadline 1min --max-gpus 8192 --switch-ports 16
refused "plan: planes where no candidate spans NVLink domains names --planes" planes \
  plan --workload bert --system dgx-h100 --deadline 1min --max-gpus 8 --planes 2
refused "plan: nine planes names --planes" planes \
  plan --workload bert --system dgx-h100 --deadline 1min --planes 9
refused "collective: two tiers too few for the GPU count names --tiers" tiers \
  collective --system dgx-h100 --gpus 4096 --tiers 2 --op allreduce --min-size 1MiB --max-size 1MiB
refused "collective: five tiers names --tiers" tiers \
  collective --system dgx-h100 --gpus 4096 --tiers 5 --op allreduce --min-size 1MiB --max-size 1MiB
refused "predict: tiers within one NVLink domain names --tiers" tiers \
  predict --workload bert --system dgx-h100 --gpus 8 --tiers 3
refused "predict: leaves without rails within one NVLink domain names --rail-optimized" rail-optimized \
  predict --workload bert --system dgx-h100 --gpus 8 --rail-optimized off
refused "collective: --rail-optimized takes on or off" rail-optimized \
  collective --system dgx-h100 --gpus 64 --rail-optimized maybe --op allreduce --min-size 1MiB --max-size 1MiB
refused "collective: a super-spine ratio below 1 names --superspine-oversubscription" superspine-oversubscription \
  collective --system dgx-h100 --gpus 64 --superspine-oversubscription 0.5 --op allreduce --min-size 1MiB --max-size 1MiB
"$ttsim" collective --system dgx-h100 --gpus 1024 --switch-ports 16 --tiers 4 --superspine-oversubscription 7 --rail-optimized off --op allreduce --algo ring --min-size 1GiB --max-size 1GiB >"$tmp/meta.txt"; rc=$?
check "collective: a four-tier top at 1:7 without rails is named in the header" '[[ $rc -eq 0 ]] && grep -q "16-port switches, 4 tiers, super-spines 7:1 oversubscribed, leaves not rail-optimised" "$tmp/meta.txt"'
refused "plan: two tiers that hold none of the range names --tiers" tiers \
  plan --workload bert --system dgx-h100 --deadline 1min --min-gpus 4096 --max-gpus 8192 --tiers 2
"$ttsim" collective --system dgx-h100 --gpus 4096 --switch-ports 16 --tiers 4 --op allreduce --algo ring --min-size 1GiB --max-size 1GiB >"$tmp/tiers.txt"; rc=$?
check "collective: four tiers of 16-port switches hold what three cannot, and the header says so" '[[ $rc -eq 0 ]] && grep -q "16-port switches, 4 tiers" "$tmp/tiers.txt"'

# Scenario keys: a collective's cluster, a sweep's network option.
printf 'scenario: collective\ncluster:\n  system: dgx-h100\n  gpus: 1024\n  planes: 2\n  switch_ports: 32\n  spine_oversubscription: 2\ncollective: {op: allreduce, algorithm: ring, min_size: 1GiB, max_size: 1GiB}\n' >"$tmp/col.yaml"
"$ttsim" run "$tmp/col.yaml" >"$tmp/col.txt"; rc=$?
check "collective scenario takes the shape and names it" '[[ $rc -eq 0 ]] && grep -q "32-port switches, 2 planes, spines 2:1 oversubscribed" "$tmp/col.txt"'
sed 's/switch_ports: 32/switch_ports: 8/' "$tmp/col.yaml" >"$tmp/col8.yaml"
"$ttsim" run "$tmp/col8.yaml" >/dev/null 2>"$tmp/err"; rc=$?
check "collective scenario: a radix too small is refused at its line and key" '[[ $rc -eq 2 ]] && grep -q "col8.yaml:6:.*cluster.switch_ports.*8-port switches hold at most 128" "$tmp/err"'
printf 'scenario: collective\ncluster:\n  topology_file: %s/topologies/examples/two_dgx_h100.yaml\n  planes: 2\ncollective: {op: allreduce, min_size: 1MiB, max_size: 1MiB}\n' "$root" >"$tmp/colfile.yaml"
"$ttsim" run "$tmp/colfile.yaml" >/dev/null 2>"$tmp/err"; rc=$?
check "collective scenario: planes beside a topology file are refused at the key" '[[ $rc -eq 2 ]] && grep -q "colfile.yaml:4:.*cluster.planes.*cannot be combined with topology_file" "$tmp/err"'

sweep() { printf 'scenario: sweep\nworkloads: [bert]\nsystems: [dgx-h100]\ngpus: %s\nnetwork:\n  - %s\nplots: false\n' "$1" "$2"; }
sweep '[8, 256]' '{planes: 2, spine_oversubscription: 4}' >"$tmp/sw.yaml"
"$ttsim" run "$tmp/sw.yaml" --format json >"$tmp/sw.json"; rc=$?
check "sweep network option with a shape runs, named by it, its JSON carrying it" '[[ $rc -eq 0 ]] && python3 - "$tmp/sw.json" <<"PY"
import json, sys
points = json.load(open(sys.argv[1]))["points"]
assert [p["network"]["name"] for p in points] == ["ndr-2planes-spine4"] * 2, points
assert all(p["network"]["fabric_shape"] == {"planes": 2, "spine_oversubscription": 4} for p in points)
PY'
for case in "odd|{switch_ports: 33}|switch_ports|give an even radix" \
            "small|{switch_ports: 32}|switch_ports|32-port switches hold at most 8192" \
            "planes|{planes: 0}|planes|out of range" \
            "spine|{spine_oversubscription: 0.5}|spine_oversubscription|out of range" \
            "tiers|{tiers: 2}|tiers|hold at most 2048 dgx-h100 GPUs in two tiers" \
            "tiers5|{tiers: 5}|tiers|out of range" \
            "superspine|{superspine_oversubscription: 65}|superspine_oversubscription|out of range" \
            "rails|{rail_optimized: maybe}|rail_optimized|expected true or false" \
            "typo|{plane: 2}|plane|did you mean"; do
  IFS='|' read -r name option key message <<<"$case"
  sweep '[8, 16384]' "$option" >"$tmp/sw_$name.yaml"
  "$ttsim" run "$tmp/sw_$name.yaml" >/dev/null 2>"$tmp/err"; rc=$?
  check "sweep: $name shape refused at file:line:key" '[[ $rc -eq 2 ]] && grep -q "sw_$name.yaml:6:.*$key.*$message" "$tmp/err"'
done
sweep '[8]' '{planes: 2}' >"$tmp/sw_one.yaml"
"$ttsim" run "$tmp/sw_one.yaml" >/dev/null 2>"$tmp/err"; rc=$?
check "sweep: a shape where no point spans NVLink domains is refused" '[[ $rc -eq 2 ]] && grep -q "sw_one.yaml:6:.*sets a fabric shape, but no point of this sweep spans NVLink domains" "$tmp/err"'

# A plan scenario's and a user model's network option take the same keys.
printf 'scenario: plan\nworkload: bert\nsystems: [dgx-h100]\ndeadline: 1min\ngpus: {from: 8, to: 256}\nnetwork: {planes: 2}\n' >"$tmp/plan.yaml"
"$ttsim" run "$tmp/plan.yaml" >"$tmp/plan_s.txt"; rc=$?
check "plan scenario takes network planes" '[[ $rc -eq 0 ]] && grep -q "(2 planes)" "$tmp/plan_s.txt"'
sed 's/^name: .*/name: "two planes"/' scenarios/custom-decoder-7b.yaml | sed 's/^gpus: .*/gpus: [64]/' >"$tmp/um.yaml"
echo 'network: {planes: 2, switch_ports: 128}' >>"$tmp/um.yaml"
"$ttsim" run "$tmp/um.yaml" >"$tmp/um.txt"; rc=$?
check "user model takes a network option with a shape" '[[ $rc -eq 0 ]] && grep -q "network      the system.s NICs, 2 planes, 128-port switches" "$tmp/um.txt"'
sed 's/^gpus: .*/gpus: [8]/' "$tmp/um.yaml" >"$tmp/um8.yaml"
"$ttsim" run "$tmp/um8.yaml" >/dev/null 2>"$tmp/err"; rc=$?
check "user model: a shape where no count spans NVLink domains is refused at the key" '[[ $rc -eq 2 ]] && grep -q "um8.yaml:.*network.*no count spans two NVLink domains" "$tmp/err"'
sed 's/^network: {planes: 2, switch_ports: 128}/network: {name: two, planes: 2}/' "$tmp/um.yaml" >"$tmp/umname.yaml"
"$ttsim" run "$tmp/umname.yaml" >/dev/null 2>"$tmp/err"; rc=$?
check "user model: a network option's name is refused at its key" '[[ $rc -eq 2 ]] && grep -q "umname.yaml:.*network.name.*no name labels" "$tmp/err"'

# Per plane: on a 2-plane fabric the collective table and JSON name each plane's busiest link and traffic.
"$ttsim" collective --system dgx-h100 --gpus 64 --planes 2 --op allreduce --algo ring --min-size 1GiB --max-size 1GiB >"$tmp/planes.txt"
check "collective table on 2 planes reports both planes" 'grep -q "# per plane: 2 planes" "$tmp/planes.txt" && grep -q "plane 0: .* GB sent by the NICs, busiest link plane0:" "$tmp/planes.txt" && grep -q "plane 1: .* GB sent by the NICs, busiest link plane1:" "$tmp/planes.txt"'
"$ttsim" collective --system dgx-h100 --gpus 64 --op allreduce --algo ring --min-size 1GiB --max-size 1GiB >"$tmp/plane.txt"
check "collective table on 1 plane has no per-plane block" '! grep -q "per plane" "$tmp/plane.txt"'
"$ttsim" collective --system dgx-h100 --gpus 64 --planes 2 --op allreduce --algo ring --min-size 1GiB --max-size 1GiB --format json >"$tmp/planes.json"
"$ttsim" collective --system dgx-h100 --gpus 64 --op allreduce --algo ring --min-size 1GiB --max-size 1GiB --format json >"$tmp/plane.json"
check "collective JSON: each of 2 planes carries half of what 1 plane does" 'python3 - "$tmp/planes.json" "$tmp/plane.json" <<"PY"
import json, sys
two = json.load(open(sys.argv[1]))["results"][0]["planes"]
one = json.load(open(sys.argv[2]))["results"][0]["planes"]
assert [p["plane"] for p in two] == [0, 1] and len(one) == 1, (two, one)
for p in two:
    assert abs(p["nic_bytes_sent"] - one[0]["nic_bytes_sent"] / 2) <= 1e-9 * one[0]["nic_bytes_sent"], (p, one)
    assert p["busiest_link"].startswith("plane%d:" % p["plane"]) and 0 < p["max_link_utilisation"] <= 1 + 1e-9, p
PY'

# A plan scenario's network option: a radix that cannot hold the range is named at its key (with or without a
# `gpus:` range), and a shape where no candidate leaves its NVLink domain is refused, as the CLI's plan does.
plan_yaml() { printf 'scenario: plan\nworkload: bert\nsystems: [dgx-h100]\ndeadline: 1min\nminimise: gpus\n%bnetwork: %s\n' "$1" "$2"; }
plan_yaml 'gpus: {from: 8, to: 8192}\n' '{switch_ports: 16}' >"$tmp/plan16.yaml"
"$ttsim" run "$tmp/plan16.yaml" --out "$tmp/plan16" >/dev/null 2>"$tmp/err"; rc=$?
check "plan scenario: a radix too small is refused at network.switch_ports" '[[ $rc -eq 2 ]] && grep -q "plan16.yaml:7:.*network.switch_ports.*16-port switches" "$tmp/err"'
plan_yaml '' '{switch_ports: 16}' >"$tmp/plan16d.yaml"
"$ttsim" run "$tmp/plan16d.yaml" --out "$tmp/plan16d" >/dev/null 2>"$tmp/err"; rc=$?
check "plan scenario without gpus: the radix is checked against the default range" '[[ $rc -eq 2 ]] && grep -q "plan16d.yaml:6:.*network.switch_ports" "$tmp/err"'
plan_yaml 'gpus: {from: 8, to: 8}\n' '{planes: 2}' >"$tmp/plan8.yaml"
"$ttsim" run "$tmp/plan8.yaml" --out "$tmp/plan8" >/dev/null 2>"$tmp/err"; rc=$?
check "plan scenario: planes where no candidate spans NVLink domains are refused at network" '[[ $rc -eq 2 ]] && grep -q "plan8.yaml:7:.*.network.: .*no configuration searched spans two NVLink domains" "$tmp/err"'
for d in plan16 plan16d plan8; do check "plan scenario refused: no output folder $d" '[[ ! -e "$tmp/'$d'" ]]'; done

echo "fabric shape: $fail failed"
[[ $fail -eq 0 ]]
