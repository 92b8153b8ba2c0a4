# Sourced by the tests/cli scripts that assert with shell expressions (kept out of tests/cli/*.sh, which ctest
# runs one by one). Arguments of the sourcing script: TTSIM_BINARY SOURCE_ROOT.
#   check NAME EXPRESSION   counts a failure (and prints NAME) when EXPRESSION, eval'ed, is false
# Leaves: $ttsim, $root (the working directory), $tmp (removed at exit), $fail (failures so far).
set -u
ttsim=$1; root=$2
cd "$root"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=$((fail+1)); fi; }
