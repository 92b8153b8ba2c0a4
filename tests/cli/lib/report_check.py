#!/usr/bin/env python3
"""Opens a ttsim report.html in headless Chromium and checks it (tests/cli/report_html.sh):

  renders     the DOM Chromium dumps after the page's scripts ran has the tables, and <html data-rendered> set by
              the page's own script once it parsed the embedded results.json;
  no errors   Chromium logs no console message (the page logs none; a script error or a blocked fetch would be
              one) and the page's error recorder (<html data-script-errors>) stayed empty;
  no network  every request Chromium makes goes to a recording proxy (loopback included), and none comes from
              the page; the page, copied alone into an empty folder, names no URL but in-page anchors and data:;
  numbers     every table cell that names a results.json figure (data-key, a JSON pointer) carries exactly that
              figure (data-value) and shows it to the precision of its text; the embedded JSON is results.json.

usage: report_check.py CHROMIUM PAGE RESULTS_JSON [SVG_COUNT]
Prints one "FAIL: ..." line per failed check and exits 1 if any failed, else 0.
"""
import html.parser
import json
import math
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading

# Chromium's own background services (component updater, time and account checks), which headless Chromium
# contacts at start-up whatever the page is; their requests are not the page's. A page's own fetch of any other
# host, and of these from the page (a web font, a script), is caught by the static URL check and by the page's
# Content-Security-Policy, whose refusal is a console message.
CHROMIUM_SERVICE_HOSTS = re.compile(r"^([a-z0-9-]+\.)*(google\.com|googleapis\.com|gvt1\.com|gstatic\.com)(:\d+)?$")

failures = []


def fail(message):
    failures.append(message)
    print("FAIL: " + message)


class Page(html.parser.HTMLParser):
    """The parts of the page the checks need: keyed cells, URL-bearing attributes, the embedded JSON."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.cells, self.urls, self.tables, self.svgs = [], [], 0, 0
        self.root_attrs, self.embedded = {}, None
        self._cell, self._in_json = None, False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "html":
            self.root_attrs = a
        if tag == "table":
            self.tables += 1
        if tag == "svg":
            self.svgs += 1
        if tag == "link":
            self.urls.append("<link> " + str(a.get("href")))
        for name in ("src", "href", "xlink:href", "action", "poster", "srcset", "data"):
            if name in a and a[name] is not None and not a[name].startswith(("#", "data:")):
                self.urls.append(f"<{tag} {name}={a[name]}>")
        if tag == "td" and "data-key" in a:
            self._cell = {"key": a["data-key"], "value": a.get("data-value"), "text": ""}
        if tag == "script" and a.get("id") == "results-json":
            self._in_json, self.embedded = True, ""

    def handle_endtag(self, tag):
        if tag == "td" and self._cell is not None:
            self.cells.append(self._cell)
            self._cell = None
        if tag == "script":
            self._in_json = False

    def handle_data(self, data):
        if self._cell is not None:
            self._cell["text"] += data
        if self._in_json:
            self.embedded += data


def resolve(document, pointer):
    node = document
    for part in pointer.split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, list):
            node = node[int(part)]
        elif isinstance(node, dict) and part in node:
            node = node[part]
        else:
            return KeyError
    return node


def shown_matches(text, value):
    """The cell's text is `value` to the precision it is printed with (durations in s / min / h from minutes)."""
    text = text.strip()
    scale = {"s": 60.0, "min": 1.0, "h": 1 / 60.0}
    m = re.fullmatch(r"([-+]?[0-9.]+)\s*(s|min|h|%)?", text)
    if not m:
        return False
    number, unit = m.group(1), m.group(2)
    shown = float(number) / scale[unit] if unit in scale else float(number)
    decimals = len(number.split(".")[1]) if "." in number else 0
    half_step = 0.5 * 10 ** -decimals / (scale[unit] if unit in scale else 1.0)
    return abs(shown - value) <= half_step * (1 + 1e-9) + 1e-12


def proxy(server, requests):
    while True:
        try:
            connection, _ = server.accept()
        except OSError:
            return
        connection.settimeout(2)
        try:
            data = connection.recv(8192)
            line = data.split(b"\r\n")[0].decode(errors="replace")
        except ConnectionResetError:
            data, line = b"", ""   # reset before a byte was sent: no request either
        except OSError:
            data, line = None, "(unreadable request)"
        # A connection closed before it sent a byte fetched nothing: Chromium opens speculative connections
        # to its proxy and drops them when it exits after --dump-dom (seen once in CI as an empty request).
        if data == b"":
            requests.append(None)
        else:
            requests.append(line)
        connection.close()


def request_host(line):
    parts = line.split()
    if len(parts) < 2:
        return line
    target = parts[1]
    return re.sub(r"^[a-z]+://", "", target).split("/")[0]


def main():
    chromium, page_path, results_path = sys.argv[1:4]
    svg_count = int(sys.argv[4]) if len(sys.argv) > 4 else None
    results = json.load(open(results_path))
    work = tempfile.mkdtemp(prefix="report-check-")
    try:
        # Alone in a folder: a relative reference (an image, a stylesheet next to it) cannot load.
        page = os.path.join(work, "page", "report.html")
        os.makedirs(os.path.dirname(page))
        shutil.copy(page_path, page)

        server = socket.socket()
        server.bind(("127.0.0.1", 0))
        server.listen(32)
        requests = []
        listener = threading.Thread(target=proxy, args=(server, requests), daemon=True)
        listener.start()
        command = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                   "--user-data-dir=" + os.path.join(work, "profile"), "--enable-logging=stderr", "--v=0",
                   "--proxy-server=http://127.0.0.1:%d" % server.getsockname()[1], "--proxy-bypass-list=<-loopback>",
                   "--disable-background-networking", "--disable-component-update", "--virtual-time-budget=5000",
                   "--dump-dom", "file://" + page]
        run = subprocess.run(command, capture_output=True, text=True, timeout=120)
        try:
            server.shutdown(socket.SHUT_RDWR)   # wakes the listener's accept() (close alone does not on Linux)
        except OSError:
            pass
        server.close()
        listener.join(timeout=5)   # a request still being read is counted before the check
        if run.returncode != 0:
            fail(f"chromium exited {run.returncode}: {run.stderr[-2000:]}")
        console = [line for line in run.stderr.splitlines() if ":CONSOLE" in line]
        for line in console:
            fail("console message: " + line)
        empty_connections = sum(1 for r in requests if r is None)
        requests = [r for r in requests if r is not None]
        for line in requests:
            if not CHROMIUM_SERVICE_HOSTS.match(request_host(line)):
                fail("network request: " + line)

        dom = Page()
        dom.feed(run.stdout)
        source = Page()
        source.feed(open(page_path, encoding="utf-8").read())
        if dom.root_attrs.get("data-script-errors"):
            fail("script errors recorded by the page: " + dom.root_attrs["data-script-errors"])
        if dom.root_attrs.get("data-rendered") != results.get("schema"):
            fail("the page's script did not run to the end (no <html data-rendered=\"%s\">)" % results.get("schema"))
        if dom.tables == 0:
            fail("the rendered page has no table")
        for url in source.urls:
            fail("the page names a URL outside itself: " + url)
        text = open(page_path, encoding="utf-8").read()
        for pattern in (r"url\((?!#)", r"@import", r"@font-face"):
            if re.search(pattern, text):
                fail("the page's CSS or SVG fetches something: " + pattern)
        if svg_count is not None and source.svgs != svg_count:
            fail(f"{source.svgs} inline SVG plots, expected {svg_count} (the SVG files in --out)")

        if source.embedded is None:
            fail("no <script type=\"application/json\" id=\"results-json\">")
        elif json.loads(source.embedded) != results:
            fail("the embedded JSON is not results.json")
        if len(dom.cells) < 10:
            fail(f"only {len(dom.cells)} cells name a results.json figure")
        for cell in dom.cells:
            value = resolve(results, cell["key"])
            if value is KeyError:
                fail(f"cell {cell['key']}: no such figure in results.json")
            elif value is None:
                if cell["value"] is not None or cell["text"].strip() not in ("", "\u2013"):
                    fail(f"cell {cell['key']}: results.json has null, the page shows {cell['text']!r}")
            elif cell["value"] is None or float(cell["value"]) != value or not math.isfinite(value):
                fail(f"cell {cell['key']}: data-value {cell['value']} is not results.json's {value}")
            elif not shown_matches(cell["text"], value):
                fail(f"cell {cell['key']}: shows {cell['text']!r} for {value}")
        # Every prediction of results.json is on the page (a table that drops rows fails here).
        rows = results.get("points") or results.get("evaluated") or []
        keyed = {cell["key"] for cell in dom.cells}
        prefix = "/points/" if "points" in results else "/evaluated/"
        for i, row in enumerate(rows):
            if prefix + f"{i}/gpus" not in keyed:
                fail(f"row {prefix}{i} ({row.get('workload', '')} {row.get('gpus')} GPUs) is not on the page")
        print(f"checked {len(dom.cells)} figures, {dom.tables} tables, {source.svgs} plots, {len(console)} console "
              f"messages, {len(requests)} proxied requests (Chromium's own services: "
              f"{sum(1 for r in requests if CHROMIUM_SERVICE_HOSTS.match(request_host(r)))}); "
              f"{empty_connections} connections closed without a request")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
