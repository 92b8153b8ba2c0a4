#!/usr/bin/env bash
# Every scenario shipped in scenarios/ runs successfully, and running it twice gives byte-identical output.
set -u
ttsim=$1; root=$2
cd "$root"
pass=0; fail=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for f in scenarios/*.yaml; do
  if ! "$ttsim" run "$f" --out "$tmp/a" >"$tmp/a.txt" 2>"$tmp/a.err"; then
    fail=$((fail+1)); echo "FAIL $f: exit code $?"; head -5 "$tmp/a.err"; continue; fi
  "$ttsim" run "$f" --out "$tmp/b" >"$tmp/b.txt" 2>/dev/null
  if ! cmp -s "$tmp/a.txt" "$tmp/b.txt"; then fail=$((fail+1)); echo "FAIL $f: output differs between two runs"; continue; fi
  for file in "$tmp"/a/*; do
    [[ -e $file ]] || continue
    case $file in *.png|*.svg) continue;; esac   # plots may embed timestamps
    if ! cmp -s "$file" "$tmp/b/$(basename "$file")"; then fail=$((fail+1)); echo "FAIL $f: $(basename "$file") differs"; continue 2; fi
  done
  pass=$((pass+1))
  rm -rf "$tmp/a" "$tmp/b"
done
echo "shipped scenarios: $pass passed, $fail failed"
[[ $fail -eq 0 ]]
