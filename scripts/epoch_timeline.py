#!/usr/bin/env python3
"""Where a hot epoch's time goes: reads the output of a job run with
LIBRA_TRACE=1 (`libra train ... --libra`, whose output prefixes each line
with its node, "[worker 0] TRACE push 0 17 <ns>") and prints, per event,
its median, 10th and 90th percentile time after worker 0 began the epoch's
push, over the epochs every event was seen in (the first and last few left
out). Events: docs/hotpath.md ("Where an epoch's time goes"). A plain job's
output (without --libra) gives its cold chain after worker 0's previous
pull returned.

    LIBRA_TRACE=1 libra train --data D -w 2 -s 1 --batch 200 --libra \\
        --capacity 30000 > out.txt 2>&1
    scripts/epoch_timeline.py out.txt
"""
import collections
import re
import statistics
import sys

LINE = re.compile(r"\[(worker|server) ?\d+\] TRACE (\w+) (\d+) (\d+) (\d+)")


def read(lines):
    epochs = collections.defaultdict(dict)  # epoch -> "event node" -> ns
    for line in lines:
        m = LINE.search(line)
        if not m:
            continue
        role, event, node, epoch, ns = m.groups()
        name = f"{event} {role[0]}{node}"
        epochs[int(epoch)].setdefault(name, int(ns))
    return epochs


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: epoch_timeline.py OUTPUT_OF_A_TRACED_JOB")
    try:
        with open(sys.argv[1], encoding="utf-8", errors="replace") as f:
            epochs = read(f)
    except OSError as e:
        sys.exit(f"epoch_timeline.py: {e}")
    names = sorted({n for e in epochs.values() for n in e})
    order = {e: i for i, e in enumerate(["push", "packed", "fin_acked", "reports_in", "ready",
                                        "collecting", "collected",
                                        "dispatched", "checked", "applied", "published",
                                        "update_sent", "round_applied", "pushed",
                                        "replica_first", "replica", "hot_read", "hot_done", "pulled"])}
    names.sort(key=lambda n: (order.get(n.split()[0], 99), n))
    full = sorted(e for e, seen in epochs.items() if len(seen) == len(names))
    full = full[5:-5] if len(full) > 20 else full
    if "push w0" in names:
        def base(e):
            return epochs[e]["push w0"]
        what = "worker 0's push began"
    elif "pulled w0" in names:
        # A plain job (`libra train` without --libra) has only the cold
        # chain: its epoch begins when worker 0's previous pull returned.
        full = [e for e in full if "pulled w0" in epochs.get(e - 1, {})]
        def base(e):
            return epochs[e - 1]["pulled w0"]
        what = "worker 0's previous pull returned (a plain job)"
    else:
        full = []
    if not full:
        sys.exit("no epoch with every event: was the job `libra train` run with LIBRA_TRACE=1?")
    print(f"{len(full)} epochs; microseconds after {what}")
    print(f"{'event':18} {'median':>8} {'p10':>8} {'p90':>8}")
    for name in names:
        times = sorted((epochs[e][name] - base(e)) / 1e3 for e in full)
        p10, p90 = times[len(times) // 10], times[(9 * len(times)) // 10]
        print(f"{name:18} {statistics.median(times):8.0f} {p10:8.0f} {p90:8.0f}")
    nexts = [(epochs[e + 1]["push w0"] - epochs[e]["push w0"]) / 1e3 for e in full
             if "push w0" in epochs.get(e + 1, {}) and "push w0" in epochs[e]]
    if nexts:
        print(f"{'next push w0':18} {statistics.median(nexts):8.0f}")


if __name__ == "__main__":
    main()
