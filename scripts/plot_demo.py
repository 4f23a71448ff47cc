#!/usr/bin/env python3
"""Figures of a `libra demo` report: python3 plot_demo.py REPORT.json OUT_DIR.

Writes log_loss.png (training and held-out log loss over wall-clock time,
both runs), server_bytes.png (bytes into the servers per iteration, both
runs), key_frequency.png (updates per key by rank, with the hot-set cut-off)
and, after an emulated demo's sweep, sweep.png (speedup against link speed,
with the bound, marking where the cost model turned the hot path off).
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt  # noqa: E402

RUNS = (("plain", "plain PS", "tab:blue"), ("libra", "Libra", "tab:orange"))


def plot_log_loss(report, out):
    fig, ax = plt.subplots(figsize=(7, 4))
    for name, label, color in RUNS:
        run = report["runs"].get(name)
        if not run:
            continue
        curve = run.get("loss_curve", [])
        ax.plot([p["seconds"] for p in curve], [p["train_log_loss"] for p in curve],
                color=color, label=label + ": training (worker 0)")
        epochs = run.get("epochs", [])
        ax.plot([e.get("at_seconds", 0) for e in epochs], [e["test_log_loss"] for e in epochs],
                "o--", color=color, label=label + ": held out, end of epoch")
    ax.set_xlabel("seconds since training began (wall clock)")
    ax.set_ylabel("log loss")
    where = ("%g Mbit/s emulated links" % report["rate_mbit"]
             if report.get("network") == "emulated" else "loopback")
    speedup = report.get("speedup")
    ax.set_title("Log loss over time, %s%s" % (where, ", Libra %.2fx" % speedup if speedup else ""))
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "log_loss.png"), dpi=120)
    plt.close(fig)


def server_bytes_per_round(run):
    """Bytes into all servers (ZeroMQ) per iteration, summed over servers."""
    total = []
    for node in run.get("nodes", []):
        if node.get("role") != "server":
            continue
        for i, b in enumerate(node.get("bytes_received_by_round", [])):
            if i == len(total):
                total.append(0)
            total[i] += b
    return total


def plot_server_bytes(report, out):
    fig, ax = plt.subplots(figsize=(7, 4))
    for name, label, color in RUNS:
        run = report["runs"].get(name)
        if not run:
            continue
        per_round = server_bytes_per_round(run)
        ax.plot(range(1, len(per_round) + 1), [b / 1e3 for b in per_round], color=color,
                label="%s (mean %.1f kB)" % (label, sum(per_round) / max(1, len(per_round)) / 1e3))
    ax.set_xlabel("iteration (one push of every worker)")
    ax.set_ylabel("kB into the servers (ZeroMQ)")
    ax.set_title("Server bytes per iteration")
    ax.set_ylim(bottom=0)
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "server_bytes.png"), dpi=120)
    plt.close(fig)


def plot_key_frequency(report, out):
    hot_set = report.get("hot_set")
    if not hot_set or not hot_set.get("updates_by_rank"):
        return
    ranks = [p[0] for p in hot_set["updates_by_rank"]]
    updates = [p[1] for p in hot_set["updates_by_rank"]]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.loglog(ranks, updates, color="tab:blue", label="updates per key (one epoch of pushes)")
    cut = hot_set.get("hot_feature_keys", 0)
    if cut:
        ax.axvline(cut, color="tab:red", linestyle="--",
                   label="hot cut-off: %d keys, %.0f%% of the key updates"
                   % (cut, 100 * hot_set.get("hot_update_share", 0)))
    ax.set_xlabel("key rank (most updated first)")
    ax.set_ylabel("updates")
    ax.set_title("Key-update frequency")
    ax.legend()
    ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "key_frequency.png"), dpi=120)
    plt.close(fig)


def plot_sweep(report, out):
    points = sorted(report.get("sweep") or [], key=lambda p: p["rate_mbit"])
    if not points:
        return
    rates = [p["rate_mbit"] for p in points]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(rates, [p["speedup"] for p in points], "o-", color="tab:orange",
            label="measured: Libra samples/s over plain PS")
    ax.plot(rates, [p.get("bound", 1.0) for p in points], "s--", color="tab:gray",
            label="bound (hot share, N, M)")
    if any("bound_with_overlap" in p for p in points):
        ax.plot(rates, [p.get("bound_with_overlap", 1.0) for p in points], "^:", color="tab:green",
                label="bound with measured overlap")
    off = [p for p in points if not p.get("hot_path_on")]
    if off:
        ax.scatter([p["rate_mbit"] for p in off], [p["speedup"] for p in off], s=160,
                   facecolors="none", edgecolors="tab:red", linewidths=1.5, zorder=3,
                   label="cost model: no hot set pays (Libra runs plain)")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xscale("log")
    ax.set_xticks(rates)
    ax.set_xticklabels(["%g" % r for r in rates])
    ax.set_xlabel("host link speed (Mbit/s, each direction)")
    ax.set_ylabel("speedup")
    ax.set_title("Speedup against link speed")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "sweep.png"), dpi=120)
    plt.close(fig)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: plot_demo.py REPORT.json OUT_DIR")
    with open(sys.argv[1]) as f:
        report = json.load(f)
    out = sys.argv[2]
    os.makedirs(out, exist_ok=True)
    plot_log_loss(report, out)
    plot_server_bytes(report, out)
    plot_key_frequency(report, out)
    plot_sweep(report, out)


if __name__ == "__main__":
    main()
