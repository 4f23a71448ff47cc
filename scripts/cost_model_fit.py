#!/usr/bin/env python3
"""How well the cost model (src/hot/cost_model.h) predicts the hot path's
epoch: reads reports of `libra bench cluster` (cluster-report.json, whose
runs carry `cost_prediction`, a forced set's too) and prints, per run, the
model's terms beside the measured epoch, then the RMS of the log error and
which sets the model would keep (a predicted saving of 10% or more).

    libra bench cluster --models lr --workloads skewed-full,paper-30k \\
        --workers 2,4,8 --servers 1,2 --rows 40000 --epochs 1 \\
        --rate-mbit 100,500 --capacity 10000 --out runs
    scripts/cost_model_fit.py runs/cluster-report.json

With --latency-ms L and --cpu-scale S the hot path's epoch is priced again
with a fixed latency of L ms (stretched by the processes per core, as the
model does) and its CPU terms times S, and with --serial A the share A of
the shorter of the link and the CPU term (the busier of per-processor and
shared) that the longer does not hide (CostConstants::serial_share);
--grid tries a range of all three.
"""
import argparse
import json
import math

MIN_SAVING = 0.10  # CostConstants::min_saving


def read_runs(paths):
    runs = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            report = json.load(f)
        cores = report.get("options", {}).get("cores", 2)
        for c in report.get("configurations", []):
            p = c.get("cost_prediction")
            # (A plain job's prediction, keys 0, has no hot-path terms.)
            if (not p or "link_seconds_per_epoch" not in p or not p.get("keys")
                    or not c.get("speedup")):
                continue
            plain = p["plain_seconds_per_epoch"]
            runs.append({
                "name": f"{c['model']:6} {c['workload']:11} {c['workers']}x{c['servers']} "
                        f"{c['rate_mbit']:4.0f}",
                "processes_per_core": max(1.0, (c["workers"] + c["servers"] + 1) / cores),
                "plain": plain,
                "unmodelled": p["unmodelled_seconds_per_epoch"],
                "link": p["link_seconds_per_epoch"],
                "cpu": p["cpu_seconds_per_epoch"],
                "shared": p["shared_cpu_seconds_per_epoch"],
                "latency": p["latency_seconds_per_epoch"],
                "predicted": p["libra_seconds_per_epoch"],
                "measured": plain / c["speedup"],
                "speedup": c["speedup"],
            })
    return runs


def repriced(run, latency_s, cpu_scale, serial):
    if latency_s is None:
        return run["predicted"]
    cpu = cpu_scale * max(run["cpu"], run["shared"])
    return (run["unmodelled"] + latency_s * run["processes_per_core"] +
            max(run["link"], cpu) + serial * min(run["link"], cpu))


def score(runs, latency_s, cpu_scale, serial):
    error = 0.0
    paying = kept = kept_losing = kept_paying = 0
    for run in runs:
        predicted = repriced(run, latency_s, cpu_scale, serial)
        error += math.log(predicted / run["measured"]) ** 2
        keep = run["plain"] - predicted > MIN_SAVING * run["plain"]
        paying += run["speedup"] >= 1 / (1 - MIN_SAVING)
        kept += keep
        kept_paying += keep and run["speedup"] >= 1 / (1 - MIN_SAVING)
        kept_losing += keep and run["speedup"] < 1.0
    return math.sqrt(error / max(1, len(runs))), paying, kept, kept_paying, kept_losing


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("reports", nargs="+")
    parser.add_argument("--latency-ms", type=float)
    parser.add_argument("--cpu-scale", type=float, default=1.0)
    parser.add_argument("--serial", type=float, default=0.2)
    parser.add_argument("--grid", action="store_true")
    args = parser.parse_args()
    runs = read_runs(args.reports)
    if not runs:
        raise SystemExit("no run with a cost_prediction in " + ", ".join(args.reports))
    latency_s = args.latency_ms / 1e3 if args.latency_ms is not None else None
    print("run                          plain    link     cpu  shared latency unmod |"
          "  predicted measured  speedup pred / meas  (ms)")
    for r in runs:
        predicted = repriced(r, latency_s, args.cpu_scale, args.serial)
        latency = r["latency"] if latency_s is None else latency_s * r["processes_per_core"]
        keep = r["plain"] - predicted > MIN_SAVING * r["plain"]
        print(f"{r['name']} {r['plain'] * 1e3:7.2f} {r['link'] * 1e3:7.2f} "
              f"{args.cpu_scale * r['cpu'] * 1e3:7.2f} {args.cpu_scale * r['shared'] * 1e3:7.2f} "
              f"{latency * 1e3:7.2f} {r['unmodelled'] * 1e3:5.2f} | {predicted * 1e3:9.2f} "
              f"{r['measured'] * 1e3:8.2f}  {r['plain'] / predicted:5.2f} / {r['speedup']:4.2f}"
              f"{'  kept' if keep else ''}")
    rms, paying, kept, kept_paying, kept_losing = score(runs, latency_s, args.cpu_scale,
                                                        args.serial)
    print(f"\nRMS log error {rms:.2f}; {paying} of {len(runs)} runs measured "
          f"{1 / (1 - MIN_SAVING):.2f}x or more; the model keeps {kept} sets, {kept_paying} of "
          f"them such, {kept_losing} measured under 1.0x")
    if args.grid:
        print("\nlatency ms  cpu scale  serial  RMS log error  kept  kept >= 1.11x  kept < 1.0x")
        for latency_ms in (0.5, 1, 1.5, 2, 3, 4):
            for cpu_scale in (0.5, 0.6, 0.8, 1.0):
                for serial in (0.0, 0.1, 0.2, 0.3, 0.5):
                    rms, _, kept, kept_paying, kept_losing = score(runs, latency_ms / 1e3,
                                                                   cpu_scale, serial)
                    print(f"{latency_ms:10.1f} {cpu_scale:10.1f} {serial:7.1f} {rms:14.2f} "
                          f"{kept:5} {kept_paying:14} {kept_losing:12}")


if __name__ == "__main__":
    main()
