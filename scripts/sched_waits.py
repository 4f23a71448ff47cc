#!/usr/bin/env python3
"""How long each thread of a job waited to run while a CPU sat idle: runs
the command under `perf record` of the scheduler's switch and wakeup
events (all CPUs), names each process by its role as thread_cpu.py does
(DMLC_ROLE, or "switchd", or "launcher"), and prints per process role and
thread name the time its threads were runnable (woken, or preempted, and
not yet running), how much of it some CPU was idle, how many waits there
were, and the waits with more than 100 us of an idle CPU. A thread that
waits while a CPU idles is time the job lost to where the kernel placed
the thread, not to work (docs/PERFORMANCE.md, "A forced set").

    scripts/sched_waits.py libra train --data D -w 2 -s 1 --batch 200 --epochs 1 \\
        --libra --capacity 30000

Or on the text of a recording made by hand (processes named by pid):

    perf record -e sched:sched_switch -e sched:sched_wakeup -a -o s.data -- CMD
    perf script -i s.data -F comm,pid,tid,cpu,time,event,trace > s.txt
    scripts/sched_waits.py --script s.txt

Needs perf and the right to trace every CPU (root, or
kernel.perf_event_paranoid <= -1).
"""
import collections
import importlib.util
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

LONG_WAIT = 100e-6  # seconds of an idle CPU that make a wait long

EVENT = re.compile(r"\s*(.*?)\s+(\d+)/(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+sched:(\w+):\s+(.*)")
SWITCH = re.compile(r"prev_comm=(.*) prev_pid=(\d+) .*prev_state=(\S+) ==> "
                    r"next_comm=(.*) next_pid=(\d+)")
WAKEUP = re.compile(r"comm=(.*) pid=(\d+) ")


class Waits:
    """Per thread: runnable time, the part of it with a CPU idle, waits, and
    the waits with more than LONG_WAIT of an idle CPU."""

    def __init__(self):
        self.running = {}    # cpu -> tid running (0: idle); absent: not seen yet
        self.runnable = {}   # tid -> idle overlap of its current wait, seconds
        self.process = {}    # tid -> pid
        self.name = {}       # tid -> thread name
        self.total = collections.Counter()
        self.idle = collections.Counter()
        self.waits = collections.Counter()
        self.long_waits = collections.Counter()
        self.long_idle = collections.Counter()
        self.cpu_idle = 0.0  # seconds of idle CPU, summed over the CPUs seen
        self.first = self.last = None

    def _advance(self, t):
        if self.last is not None and t > self.last:
            dt = t - self.last
            idle_cpus = sum(1 for tid in self.running.values() if tid == 0)
            self.cpu_idle += idle_cpus * dt
            for tid in self.runnable:
                self.total[tid] += dt
                if idle_cpus:
                    self.idle[tid] += dt
                    self.runnable[tid] += dt
        if self.first is None:
            self.first = t
        self.last = t

    def _runs(self, tid):
        wait = self.runnable.pop(tid, None)
        if wait is None:
            return
        self.waits[tid] += 1
        if wait > LONG_WAIT:
            self.long_waits[tid] += 1
            self.long_idle[tid] += wait

    def add(self, line):
        m = EVENT.match(line)
        if not m:
            return
        comm, pid, tid, cpu, t, event, rest = m.groups()
        if int(tid) != 0:
            self.process[int(tid)] = int(pid)
            self.name[int(tid)] = comm
        self._advance(float(t))
        if event == "sched_switch":
            s = SWITCH.search(rest)
            if not s:
                return
            prev_comm, prev, state, next_comm, nxt = s.groups()
            prev, nxt = int(prev), int(nxt)
            if prev != 0 and state.startswith("R"):  # preempted: still runnable
                self.runnable.setdefault(prev, 0.0)
            self.running[int(cpu)] = nxt
            self.name.setdefault(nxt, next_comm)
            self._runs(nxt)
        elif event == "sched_wakeup":
            w = WAKEUP.search(rest)
            if not w:
                return
            woken = int(w.group(2))
            self.name.setdefault(woken, w.group(1))
            if woken not in self.running.values():
                self.runnable.setdefault(woken, 0.0)

    def rows(self, roles):
        """(role, thread) -> [runnable, with a CPU idle, waits, long waits,
        their idle seconds], summed over the threads of that name and role."""
        out = collections.defaultdict(lambda: [0.0, 0.0, 0, 0, 0.0])
        for tid in set(self.total) | set(self.waits):
            if tid == 0:
                continue
            pid = self.process.get(tid)
            role = roles.get(pid, f"pid {pid}" if pid is not None else "?")
            row = out[(role, self.name.get(tid, "?"))]
            row[0] += self.total[tid]
            row[1] += self.idle[tid]
            row[2] += self.waits[tid]
            row[3] += self.long_waits[tid]
            row[4] += self.long_idle[tid]
        return out


def report(waits, roles, out=sys.stdout):
    rows = waits.rows(roles)
    span = (waits.last - waits.first) if waits.first is not None else 0.0
    cpus = len(waits.running)
    print(f"{span:.3f} s on {cpus} CPUs, {waits.cpu_idle:.3f} CPU-seconds idle", file=out)
    print(f"{'runnable ms':>12} {'CPU idle ms':>12} {'waits':>7} {'long':>6} {'long ms':>9}  "
          "process   thread (long: over 100 us of an idle CPU)", file=out)
    totals = [0.0, 0.0, 0, 0, 0.0]
    for (role, name), row in sorted(rows.items(), key=lambda kv: -kv[1][1]):
        totals = [a + b for a, b in zip(totals, row)]
        if row[1] < 0.0005 and row[3] == 0:
            continue  # threads that hardly waited with a CPU idle
        print(f"{row[0] * 1e3:12.1f} {row[1] * 1e3:12.1f} {row[2]:7d} {row[3]:6d} "
              f"{row[4] * 1e3:9.1f}  {role:9s} {name}", file=out)
    print(f"{totals[0] * 1e3:12.1f} {totals[1] * 1e3:12.1f} {totals[2]:7d} {totals[3]:6d} "
          f"{totals[4] * 1e3:9.1f}  total", file=out)


def load_thread_cpu():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "thread_cpu.py")
    spec = importlib.util.spec_from_file_location("thread_cpu", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(command):
    thread_cpu = load_thread_cpu()
    with tempfile.TemporaryDirectory() as d:
        data = os.path.join(d, "sched.data")
        try:
            perf = subprocess.Popen(["perf", "record", "-q", "-e", "sched:sched_switch", "-e",
                                     "sched:sched_wakeup", "-a", "-o", data, "--", *command],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        except OSError as e:
            sys.exit(f"sched_waits.py: perf: {e}")
        roles, done = {}, threading.Event()

        def watch():
            while not done.is_set():
                for pid in thread_cpu.descendants(perf.pid):
                    try:
                        roles[pid] = thread_cpu.role_of(pid)
                    except OSError:
                        continue
                time.sleep(0.01)

        watcher = threading.Thread(target=watch)
        watcher.start()
        _, err = perf.communicate()
        done.set()
        watcher.join()
        roles.pop(perf.pid, None)
        if perf.returncode != 0 or not os.path.exists(data):
            sys.exit(f"sched_waits.py: perf record failed ({perf.returncode}): "
                     f"{err.decode(errors='replace').strip()}")
        text = subprocess.run(["perf", "script", "-i", data, "-F",
                               "comm,pid,tid,cpu,time,event,trace"],
                              capture_output=True, text=True, check=False).stdout
    waits = Waits()
    for line in text.splitlines():
        waits.add(line)
    report(waits, roles)


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # output piped into head
    args = sys.argv[1:]
    if not args:
        sys.exit("usage: sched_waits.py COMMAND [ARGS...] | sched_waits.py --script PERF_SCRIPT_TEXT")
    if args[0] == "--script":
        if len(args) != 2:
            sys.exit("usage: sched_waits.py --script PERF_SCRIPT_TEXT")
        try:
            with open(args[1], encoding="utf-8", errors="replace") as f:
                waits = Waits()
                for line in f:
                    waits.add(line)
        except OSError as e:
            sys.exit(f"sched_waits.py: {e}")
        if waits.first is None:
            sys.exit(f"sched_waits.py: no sched_switch or sched_wakeup event in {args[1]}")
        report(waits, {})
        return
    run(args)


if __name__ == "__main__":
    main()
