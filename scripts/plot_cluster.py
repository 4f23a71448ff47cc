#!/usr/bin/env python3
"""Figures of `libra bench cluster`: measured speedup against the predicted
bound per configuration, and the bytes through the servers' links.

Usage: plot_cluster.py CLUSTER_REPORT.json OUT_DIR
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def label(c):
    rate = f" {c['rate_mbit']:g} Mbit/s" if "rate_mbit" in c else ""
    return f"{c['workload']}\n{c['model']} N={c['workers']} M={c['servers']}{rate}"


def server_bytes(run):
    total_in = sum(l["bytes_in"] for l in run.get("links", []) if l["host"].startswith("server"))
    total_out = sum(l["bytes_out"] for l in run.get("links", []) if l["host"].startswith("server"))
    return total_in / 1e6, total_out / 1e6


def measured_speedup(c):
    """(speedup, low, high): the median and range over the rounds of a
    configuration run with --repeat, else its one run's."""
    rounds = c.get("over_rounds", {}).get("speedup")
    if rounds:
        return rounds["median"], rounds["min"], rounds["max"]
    return c["speedup"], c["speedup"], c["speedup"]


def main():
    report_path, out_dir = sys.argv[1], sys.argv[2]
    with open(report_path) as f:
        report = json.load(f)
    configs = [c for c in report["configurations"] if "speedup" in c]
    if not configs:
        print("plot_cluster: no finished configuration to draw")
        return 0
    names = [label(c) for c in configs]
    x = range(len(configs))
    width = 0.4
    rates = report["options"]["rate_mbit"]
    rates = rates if isinstance(rates, list) else [rates]

    fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(configs)), 4.5))
    # With --repeat: the median over the rounds, their range as an error bar.
    measured = [measured_speedup(c) for c in configs]
    repeated = any("over_rounds" in c for c in configs)
    ax.bar([i - width / 2 for i in x], [m[0] for m in measured], width,
           yerr=[[m[0] - m[1] for m in measured], [m[2] - m[0] for m in measured]],
           label="measured (median, range)" if repeated else "measured")
    ax.bar([i + width / 2 for i in x], [c["bound"]["speedup"] for c in configs], width,
           label="bound (coverage, N, M)", alpha=0.6)
    ax.axhline(1.0, color="gray", linewidth=0.8)
    ax.set_xticks(list(x))
    ax.set_xticklabels(names, fontsize=7)
    ax.set_ylabel("Libra samples/s over plain PS")
    ax.set_title("libra bench cluster: %s Mbit/s host links" % ", ".join("%g" % r for r in rates))
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "speedup.png"), dpi=120)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(configs)), 4.5))
    plain = [server_bytes(c["plain"]) for c in configs]
    libra = [server_bytes(c["libra"]) for c in configs]
    ax.bar([i - width / 2 for i in x], [p[0] for p in plain], width, label="plain: into servers")
    ax.bar([i + width / 2 for i in x], [l[0] for l in libra], width, label="Libra: into servers")
    ax.bar([i - width / 2 for i in x], [p[1] for p in plain], width, bottom=[p[0] for p in plain],
           label="plain: out of servers", alpha=0.5)
    ax.bar([i + width / 2 for i in x], [l[1] for l in libra], width, bottom=[l[0] for l in libra],
           label="Libra: out of servers", alpha=0.5)
    ax.set_xticks(list(x))
    ax.set_xticklabels(names, fontsize=7)
    ax.set_ylabel("MB through the servers' links")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "server_bytes.png"), dpi=120)
    plt.close(fig)
    return 0


if __name__ == "__main__":
    sys.exit(main())
