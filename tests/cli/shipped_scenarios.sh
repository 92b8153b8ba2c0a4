#!/usr/bin/env bash
# Every scenario shipped in scenarios/ runs successfully, running it twice gives byte-identical output, and its
# table (stdout) and results.csv equal the golden copies in tests/golden/scenarios/ (regenerate deliberately,
# after checking the change is intended: tools/update-golden.sh; TTSIM_UPDATE_GOLDEN=1 here writes them).
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
  name=$(basename "$f" .yaml); golden=tests/golden/scenarios
  if [[ ${TTSIM_UPDATE_GOLDEN:-} == 1 ]]; then
    mkdir -p "$golden"; cp "$tmp/a.txt" "$golden/$name.txt"
    if [[ -e $tmp/a/results.csv ]]; then cp "$tmp/a/results.csv" "$golden/$name.csv"; else rm -f "$golden/$name.csv"; fi
  fi
  if [[ ! -e $golden/$name.txt ]]; then fail=$((fail+1)); echo "FAIL $f: no golden output $golden/$name.txt"; continue; fi
  if ! cmp -s "$tmp/a.txt" "$golden/$name.txt"; then
    fail=$((fail+1)); echo "FAIL $f: table differs from $golden/$name.txt"; diff "$golden/$name.txt" "$tmp/a.txt" | head -10; continue; fi
  if [[ -e $tmp/a/results.csv ]] && ! cmp -s "$tmp/a/results.csv" "$golden/$name.csv"; then
    fail=$((fail+1)); echo "FAIL $f: results.csv differs from $golden/$name.csv"; diff "$golden/$name.csv" "$tmp/a/results.csv" | head -10; continue; fi
  pass=$((pass+1))
  rm -rf "$tmp/a" "$tmp/b"
done
echo "shipped scenarios: $pass passed, $fail failed"
[[ $fail -eq 0 ]]
