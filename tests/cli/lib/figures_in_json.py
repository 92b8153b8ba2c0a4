"""Every figure a text answer states is in its JSON: each number of the text (a token of digits, not part of a name
such as p90, H100 or v4.1) must equal a JSON number rounded to the text's decimals, at one of the unit scales the
tables use (1; x100 for percentages; x60 for minutes shown in seconds, /60 for hours, /1440 for days; 1e-9 for bytes in GB; 1e-12
for FLOP/s in TFLOP/s), or appear as a figure inside a JSON string (notes, layouts, allocation units).
Usage: figures_in_json.py TEXT_FILE JSON_FILE [REGEX_TO_IGNORE ...]; exit 1 listing the figures not found."""
import json
import re
import sys

NUMBER = re.compile(r"(?<![A-Za-z_\d])\d+(?:\.\d+)?(?![A-Za-z_\d])")
SCALES = (1.0, 100.0, 60.0, 1 / 60.0, 1 / 1440.0, 1e-9, 1e-12)


def walk(value, numbers, strings):
    if isinstance(value, bool):
        return
    if isinstance(value, (int, float)):
        numbers.append(float(value))
    elif isinstance(value, str):
        strings.update(NUMBER.findall(value))
    elif isinstance(value, dict):
        for v in value.values():
            walk(v, numbers, strings)
    elif isinstance(value, list):
        for v in value:
            walk(v, numbers, strings)


def main():
    text = open(sys.argv[1]).read()
    for pattern in sys.argv[3:]:
        text = re.sub(pattern, "", text)
    numbers, strings = [], set()
    walk(json.load(open(sys.argv[2])), numbers, strings)
    missing = []
    for token in NUMBER.findall(text):
        if token in strings:
            continue
        decimals = len(token.split(".")[1]) if "." in token else 0
        target = float(token)
        if not any(round(v * k, decimals) == target for v in numbers for k in SCALES):
            missing.append(token)
    if missing:
        print("figures of the text not in the JSON:", ", ".join(sorted(set(missing), key=float)))
        sys.exit(1)


main()
