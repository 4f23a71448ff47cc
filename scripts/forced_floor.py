#!/usr/bin/env python3
"""The CPU floor of a forced hot set: what a Libra job must spend beyond the
plain parameter server, from the counts in two `libra train --json` reports
of the same job (plain, and with --libra --capacity N) priced at what each
unit costs alone, and the best CPU and samples/s ratios that leave
(docs/PERFORMANCE.md, "The floor of this protocol on these cores").

    libra train --data D -w 2 -s 1 --batch 200 --epochs 1 --json plain.json
    libra train --data D -w 2 -s 1 --batch 200 --epochs 1 --libra --capacity 30000 \\
        --json forced.json
    scripts/forced_floor.py plain.json forced.json [--datagram-us 0.40]

`--capacity` counts cells: 30,000 DeepFM keys of 9 values are 270000, as
`libra bench overhead --hot-sets 30000` forces them. The unit costs are those
measured on the 2-core machine of docs/PERFORMANCE.md on 2026-12-04
(bench_hotpath, bench_dataplane, perf of switchd in a forced job); give
another machine's, and the datagram's from perf of the same forced job,
with the options.
"""
import argparse
import json
import os
import sys


def cpu_seconds(report):
    return sum(p["cpu_seconds"] for p in report["processes"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("plain")
    parser.add_argument("forced")
    parser.add_argument("--datagram-us", type=float, default=0.40,
                        help="a send or a receive of one datagram (switchd's kernel samples)")
    parser.add_argument("--pack-ns", type=float, default=28,
                        help="a hot value packed and given its sum-check term (PackPush, SumCheckTerm)")
    parser.add_argument("--lookup-ns", type=float, default=11.8,
                        help="a key looked up and split, at the pull and the push (SplitHotAndCold)")
    parser.add_argument("--switch-ns", type=float, default=2.6,
                        help="a value added in the switch (ProgramDataPacket/32)")
    parser.add_argument("--server-ns", type=float, default=20,
                        help="a written value checked, packed for UPDATE and converted")
    parser.add_argument("--replica-ns", type=float, default=2,
                        help="a value applied to a worker's replica (ReplicaApply)")
    parser.add_argument("--mac-us", type=float, default=0.2,
                        help="an UPDATE signed, a REPLICA verified (SignUpdate, VerifyReplica; "
                        "the SipHash MAC: 0.27 us on 2026-12-06, when BLAKE2b's took 0.94, "
                        "0.7 on the 2026-12-04 of the other prices)")
    parser.add_argument("--cores", type=int, default=os.cpu_count(),
                        help="cores the job's processes share (for the samples/s bound)")
    a = parser.parse_args()
    try:
        with open(a.plain, encoding="utf-8") as f:
            plain = json.load(f)
        with open(a.forced, encoding="utf-8") as f:
            forced = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        sys.exit(f"forced_floor.py: {e}")

    workers = [n for n in forced["nodes"] if n.get("role") == "worker"]
    servers = [n for n in forced["nodes"] if n.get("role") == "server"]
    if "switch" not in forced or not workers or not workers[0].get("hot_path", {}).get("epochs_hot"):
        sys.exit(f"{a.forced}: not the report of a run whose hot path ran (--libra --capacity N)")
    if "switch" in plain:
        sys.exit(f"{a.plain}: the report of a Libra run; give the plain run's first")
    epochs = workers[0]["hot_path"]["epochs_hot"]
    events, io = forced["switch"]["events"], forced["switch"]["io"]
    config = forced["config"]
    value_len = 1 if config["model"] == "lr" else 1 + config["embedding_dim"]

    def per_epoch(total):
        return total / epochs

    datagrams = per_epoch(io["datagrams_received"] + io["datagrams_sent"])
    hot = per_epoch(sum(w["hot_path"]["hot_values_pushed"] for w in workers))
    cold = per_epoch(sum(w["hot_path"]["cold_values_pushed"] for w in workers))
    aggregated = per_epoch(events["values_aggregated"])
    written = per_epoch(sum(s["hot_path"]["collector"]["written_values"] for s in servers))
    updates = per_epoch(events["update_packets"])
    replicas = per_epoch(events["replicas_sent"])

    ms = 1e-6  # ns -> ms
    kernel = 2 * datagrams * a.datagram_us * 1e-3
    worker = (hot * a.pack_ns + (hot + cold) / value_len * a.lookup_ns
              + written * len(workers) * a.replica_ns) * ms + replicas * a.mac_us * 1e-3
    switch = aggregated * a.switch_ns * ms
    server = written * a.server_ns * ms + updates * a.mac_us * 1e-3
    iterations = plain["iterations"]["count"]
    plain_ms = cpu_seconds(plain) / iterations * 1e3
    server_ms = sum(p["cpu_seconds"] for p in plain["processes"]
                    if p["name"].startswith("server")) / iterations * 1e3
    saved = server_ms * (aggregated - written) / (hot + cold)
    added = kernel + worker + switch + server - saved
    forced_ms = cpu_seconds(forced) / forced["iterations"]["count"] * 1e3
    print(f"plain {plain_ms:.2f} CPU ms an iteration, forced {forced_ms:.2f}")
    print(f"per hot epoch: {datagrams:.0f} datagrams, {hot:.0f} hot and {cold:.0f} cold values "
          f"pushed, {aggregated:.0f} added in the switch, {written:.0f} written")
    print(f"floor of the added CPU: kernel {kernel:.2f} + workers {worker:.2f} + switch "
          f"{switch:.2f} + server {server:.2f} - saved {saved:.2f} = {added:.2f} ms")
    # A forced iteration takes at least its CPU spread over every core, and
    # its CPU at least plain's plus the floor; plain's iteration took what
    # it measured. Where plain leaves cores idle this bound is above the
    # CPU ratio's.
    plain_rate = plain["throughput"]["samples_per_second"]
    samples_per_iteration = config["total_batch"]
    plain_wall_ms = samples_per_iteration / plain_rate * 1e3
    print(f"best CPU ratio {plain_ms / (plain_ms + added):.2f}; best samples/s ratio on "
          f"{a.cores} cores {min(1.0, plain_wall_ms * a.cores / (plain_ms + added)):.2f} (plain "
          f"{plain_wall_ms:.2f} ms an iteration); measured CPU ratio {plain_ms / forced_ms:.2f}, "
          f"samples/s ratio {forced['throughput']['samples_per_second'] / plain_rate:.2f}")


if __name__ == "__main__":
    main()
