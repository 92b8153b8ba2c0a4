#!/usr/bin/env bash
# The README's accuracy table is `ttsim validate --summary`'s output, verbatim, so it cannot go stale: a new fit
# or a new holdout.yaml that changes a figure fails here until the README is regenerated:
#   build/ttsim validate --summary   (paste between the README's two 'validate --summary' markers)
# Cheap: --summary prices the in-sample results with the shipped profiles and reads the hold-out column from the
# shipped models/data/validation/holdout.yaml (validate_report.sh and the unit tests check that file).
source "$(dirname "$0")/lib/eval_checks.bash"

"$ttsim" validate --summary >"$tmp/summary.md"; rc=$?
check "validate --summary answers" '[[ $rc -eq 0 && -s "$tmp/summary.md" ]]'
sed -n '/^<!-- validate --summary -->$/,/^<!-- end validate --summary -->$/p' README.md | sed '1d;$d' >"$tmp/readme.md"
check "README's accuracy table = validate --summary" 'diff "$tmp/readme.md" "$tmp/summary.md"'
# A header, one row per catalog workload (five: gpt3's row says it has no result in the shipped round's fit) and
# one for all.
check "one row per workload and 'all'" '[[ $(grep -c "^| " "$tmp/summary.md") -eq 7 ]] && grep -q "^| all | " "$tmp/summary.md" && grep -q "^| gpt3 | 0 | - | 0 | - |" "$tmp/summary.md"'
# The table describes the shipped profiles only: another profile set or model is refused, naming the flag.
"$ttsim" validate --summary --model lumped >"$tmp/out" 2>&1; rc=$?
check "--summary --model lumped refused" '[[ $rc -eq 2 ]] && grep -q "'"'"'--model'"'"'" "$tmp/out"'
"$ttsim" validate --summary --round 5.0 >"$tmp/out" 2>&1; rc=$?
check "--summary --round 5.0 refused (its hold-out column is v4.1's)" '[[ $rc -eq 2 ]] && grep -q "'"'"'--round'"'"'" "$tmp/out"'

echo "readme_accuracy: $fail failed"
[[ $fail -eq 0 ]]
