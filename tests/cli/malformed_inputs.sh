#!/usr/bin/env bash
# Every file in tests/cli/malformed/ is a bad scenario. Each must make `ttsim run` exit with code 2 and print
# ONE line on stderr that names the file and a line number (file:line) and, when the file's first line says
# "# expect: TEXT", contains TEXT. No output file may be left behind.
# Every line of tests/cli/malformed/commands.txt is a bad command line (arguments after `ttsim`), checked the
# same way, with the expected text after " # expect: ".
set -u
ttsim=$1; root=$2
cd "$root"
pass=0; fail=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

check() {  # name, expected-text, needs-file-line, command...
  local name=$1 expect=$2 needs_line=$3; shift 3
  local out="$tmp/out" err="$tmp/err" code
  timeout 60 "$@" >"$out" 2>"$err"; code=$?
  local lines; lines=$(wc -l <"$err")
  local ok=1 why=""
  [[ $code -eq 2 ]] || { ok=0; why="exit code $code (want 2)"; }
  [[ $lines -eq 1 ]] || { ok=0; why+=" stderr has $lines lines (want 1)"; }
  if [[ -n $needs_line ]] && ! grep -q -- "$needs_line:[0-9]\+" "$err"; then ok=0; why+=" no '$needs_line:LINE' in message"; fi
  if [[ -n $expect ]] && ! grep -qF -- "$expect" "$err"; then ok=0; why+=" message lacks '$expect'"; fi
  if ((ok)); then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL $name: $why"; sed 's/^/    /' "$err" | head -3; fi
}

for f in tests/cli/malformed/*.yaml; do
  expect=$(sed -n '1s/^# expect: //p' "$f")
  check "$f" "$expect" "$f" "$ttsim" run "$f" --out "$tmp/outdir"
  if [[ -e "$tmp/outdir" ]] && [[ -n $(ls -A "$tmp/outdir" 2>/dev/null) ]]; then
    fail=$((fail+1)); echo "FAIL $f: left output files behind"; fi
  rm -rf "$tmp/outdir"
done
if [[ -f tests/cli/malformed/commands.txt ]]; then
  while IFS= read -r line; do
    [[ -z $line || $line == \#* ]] && continue
    args=${line%% # expect: *}; expect=""
    [[ $line == *" # expect: "* ]] && expect=${line##* # expect: }
    # shellcheck disable=SC2086
    check "ttsim $args" "$expect" "" "$ttsim" $args
  done < tests/cli/malformed/commands.txt
fi
echo "malformed inputs: $pass passed, $fail failed"
[[ $fail -eq 0 ]]
