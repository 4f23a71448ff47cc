#!/usr/bin/env python3
"""CPU seconds of every thread of a job's processes, by process role and
thread name: runs the command, samples /proc every 10 ms for each process
it starts (the role from the process's DMLC_ROLE, or "switchd", or the
command itself) and prints the CPU each thread had used and how often it
was switched out (each time it blocked or was preempted), as last seen
(docs/PERFORMANCE.md, "A forced set"; the threads are named, as `top -H`
shows them). Resolution: the kernel's clock tick (10 ms); a thread that
lives less than the sampling period may be missed.

    scripts/thread_cpu.py libra train --data D -w 2 -s 1 --batch 200 --epochs 3 \\
        --libra --capacity 30000
"""
import collections
import os
import subprocess
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")


def descendants(root):
    parents = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as f:
                parents[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
    tree, grew = {root}, True
    while grew:
        grew = False
        for pid, parent in parents.items():
            if parent in tree and pid not in tree:
                tree.add(pid)
                grew = True
    return tree


def role_of(pid):
    with open(f"/proc/{pid}/environ", "rb") as f:
        env = f.read().split(b"\0")
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        cmd = f.read().split(b"\0")
    for var in env:
        if var.startswith(b"DMLC_ROLE="):
            return var[len(b"DMLC_ROLE="):].decode()
    return "switchd" if b"switchd" in cmd else "launcher"


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: thread_cpu.py COMMAND [ARGS...]")
    try:
        job = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    except OSError as e:
        sys.exit(f"thread_cpu.py: {e}")
    roles, seen = {}, {}  # pid -> role; (pid, tid) -> (role, thread name, seconds)
    while job.poll() is None:
        for pid in descendants(job.pid):
            try:
                # Read again each time: a child seen between fork and exec
                # still has its parent's environment.
                roles[pid] = role_of(pid)
                for tid in os.listdir(f"/proc/{pid}/task"):
                    with open(f"/proc/{pid}/task/{tid}/stat", encoding="utf-8",
                              errors="replace") as f:
                        stat = f.read()
                    name = stat[stat.index("(") + 1:stat.rindex(")")]
                    fields = stat.rsplit(")", 1)[1].split()
                    seconds = (int(fields[11]) + int(fields[12])) / TICK  # utime + stime
                    with open(f"/proc/{pid}/task/{tid}/status", encoding="utf-8") as f:
                        switches = sum(int(line.split()[1]) for line in f
                                       if line.endswith("ctxt_switches\n") or
                                       "ctxt_switches:" in line)
                    seen[(pid, tid)] = (roles[pid], name, seconds, switches)
            except (OSError, ValueError):
                continue  # the process or thread ended meanwhile
        time.sleep(0.01)
    cpu, switched = collections.defaultdict(float), collections.defaultdict(int)
    for role, name, seconds, switches in seen.values():
        cpu[(role, name)] += seconds
        switched[(role, name)] += switches
    print("seconds  switches  process   thread (summed over the processes of a role)")
    for (role, name), seconds in sorted(cpu.items()):
        if seconds >= 0.005:  # idle threads (heartbeats, reapers) left out
            print(f"{seconds:7.2f}  {switched[(role, name)]:8d}  {role:9s} {name}")
    print(f"{sum(cpu.values()):7.2f}  {sum(switched.values()):8d}  total "
          f"(exit status {job.returncode})")
    sys.exit(job.returncode)


if __name__ == "__main__":
    main()
