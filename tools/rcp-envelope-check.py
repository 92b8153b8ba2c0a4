#!/usr/bin/env python3
"""How well the RCPs predict each v4.1 result's own mean convergence, by two interpolations.

ttsim's convergence model (models/convergence/convergence.hpp) interpolates the RCP records that MLPerf's
rcp_checker keeps after pruning (a lower envelope, made to judge submissions leniently). This prints, per
benchmark, the MAPE of that interpolation and of one through every record against each result's published mean
convergence (samples_to_converge_mean, RetinaNet's epochs_to_converge_mean), and the mean ratio prediction/measured
at each global batch. A diagnostic for the planner, not part of any fit.

  tools/rcp-envelope-check.py        (from the repository root; Python 3 standard library only)
"""
import collections
import csv
import statistics

ROOT = "models/data/mlperf/"


def interpolate(batch, records):
    """Linear in batch between the records around it; the end record below, the last two's line above."""
    records = sorted(records)
    xs = [r[0] for r in records]
    ys = [r[1] for r in records]
    if batch <= xs[0]:
        return ys[0]
    if batch >= xs[-1]:
        return ys[-1] + (ys[-1] - ys[-2]) / (xs[-1] - xs[-2]) * (batch - xs[-1])
    for i in range(len(xs) - 1):
        if xs[i] <= batch <= xs[i + 1]:
            return ys[i] + (ys[i + 1] - ys[i]) * (batch - xs[i]) / (xs[i + 1] - xs[i])
    raise AssertionError("no bracket")


def main():
    rcps = collections.defaultdict(list)
    for r in csv.DictReader(open(ROOT + "rcps/rcps_summary_4.1.csv")):
        rcps[r["benchmark"]].append((int(r["BS"]), float(r["olympic_mean"]), r["kept_after_pruning"] == "True"))
    ratios = collections.defaultdict(list)
    for r in csv.DictReader(open(ROOT + "v4.1_results.csv")):
        benchmark = r["benchmark"]
        if benchmark not in rcps or not r["global_batch_size"]:
            continue
        measured = r["epochs_to_converge_mean"] if benchmark == "ssd" else r["samples_to_converge_mean"]
        if not measured:
            continue
        batch = int(float(r["global_batch_size"]))
        kept = interpolate(batch, [x for x in rcps[benchmark] if x[2]])
        every = interpolate(batch, rcps[benchmark])
        ratios[benchmark].append((batch, kept / float(measured), every / float(measured)))
    for benchmark, rows in ratios.items():
        mape = lambda k: 100 * statistics.mean(abs(x[k] - 1) for x in rows)
        print(f"{benchmark}: {len(rows)} results; MAPE kept records {mape(1):.1f} %, all records {mape(2):.1f} %")
        by_batch = collections.defaultdict(list)
        for x in rows:
            by_batch[x[0]].append(x)
        for batch, xs in sorted(by_batch.items()):
            kept = statistics.mean(x[1] for x in xs)
            every = statistics.mean(x[2] for x in xs)
            print(f"  batch {batch:>6}: {len(xs):>2} results, predicted/measured kept {kept:.3f}, all {every:.3f}")


if __name__ == "__main__":
    main()
