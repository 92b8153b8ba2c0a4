#!/usr/bin/env bash
# report.html (--out DIR of `ttsim run`) opened in headless Chromium: for the default scaling study and a plan, it
# renders, logs no console error, makes no network request and shows exactly results.json's figures
# (tests/cli/lib/report_check.py says how each is checked). A deliberately broken copy of the page (a script
# error, an external image, a wrong figure, no Content-Security-Policy) must fail each check, so that the checks
# are known to work. Two runs into two folders give byte-identical pages.
# Skips (exit 77) only when Chromium is missing; tools/install-deps.sh installs it (Debian package chromium).
source "$(dirname "$0")/lib/eval_checks.bash"
chromium=$(command -v chromium || command -v chromium-browser || true)
if [[ -z $chromium ]]; then
  echo "SKIP: chromium is not installed (tools/install-deps.sh installs the Debian package chromium)"
  exit 77
fi
checker="$root/tests/cli/lib/report_check.py"

for scenario in scenarios/default.yaml scenarios/plan-deadline-bert.yaml; do
  name=$(basename "$scenario" .yaml)
  if ! "$ttsim" run "$scenario" --out "$tmp/$name" >/dev/null 2>"$tmp/$name.err"; then
    echo "FAIL: ttsim run $scenario"; cat "$tmp/$name.err"; exit 1
  fi
  "$ttsim" run "$scenario" --out "$tmp/$name-again" >/dev/null 2>&1
  check "$name: report.html written" '[[ -s $tmp/$name/report.html ]]'
  check "$name: report.html identical in two runs" 'cmp -s "$tmp/$name/report.html" "$tmp/$name-again/report.html"'
  check "$name: no temporary file left" '! ls "$tmp/$name" | grep -q "\.tmp-"'
  # Inline SVGs: gnuplot's files of a scaling study; a plan's one chart, drawn by the report itself.
  svgs=$(find "$tmp/$name" -maxdepth 1 -name '*.svg' | wc -l)
  [[ $name == plan-* ]] && svgs=$((svgs + 1))
  check "$name: report.html passes in Chromium" 'python3 "$checker" "$chromium" "$tmp/$name/report.html" "$tmp/$name/results.json" "$svgs"'
done
check "the scaling study inlines its plots" '[[ $(grep -c "<svg" "$tmp/default/report.html") -ge 8 ]]'
check "the scaling study lists the published points" 'grep -q "Published MLPerf Training v4.1 results" "$tmp/default/report.html"'
check "the plan states its measured model error" 'grep -q "p10/p90 band: .*MAPE" "$tmp/plan-deadline-bert/report.html"'

# The broken page: each check must catch its fault.
python3 - "$tmp/default/report.html" "$tmp/broken.html" <<'PY'
import re, sys
page = open(sys.argv[1], encoding="utf-8").read()
page = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page)    # lets the image load be tried
page = page.replace("</main>", '<img src="http://example.invalid/x.png" alt=""><script>undefinedFunction();</script></main>')
page = re.sub(r'data-value="([^"]*)"', 'data-value="12345.678"', page, count=1)
open(sys.argv[2], "w", encoding="utf-8").write(page)
PY
broken_rc=0
python3 "$checker" "$chromium" "$tmp/broken.html" "$tmp/default/results.json" >"$tmp/broken.txt" 2>&1 || broken_rc=$?
check "the broken page fails the checker (exit 1)" '[[ $broken_rc -eq 1 ]]'
check "the broken page's script error is caught" 'grep -q "FAIL: console message.*undefinedFunction" "$tmp/broken.txt"'
check "the broken page's script error is recorded by the page" 'grep -q "FAIL: script errors recorded" "$tmp/broken.txt"'
check "the broken page's network request is caught" 'grep -q "FAIL: network request: GET http://example.invalid/x.png" "$tmp/broken.txt"'
check "the broken page's URL is caught statically" 'grep -q "FAIL: the page names a URL outside itself" "$tmp/broken.txt"'
check "the broken page's wrong figure is caught" 'grep -q "FAIL: cell .*data-value 12345.678" "$tmp/broken.txt"'
echo "--- the checker on the broken page (expected to fail):"; grep -v "^FAIL: cell /points/[0-9]*/.*not on the page" "$tmp/broken.txt" | head -8

echo "report_html: $fail failure(s)"
exit $((fail > 0))
