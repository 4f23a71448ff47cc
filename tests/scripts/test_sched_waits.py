"""scripts/sched_waits.py on a made-up recording of two CPUs whose waits are
worked out by hand below, and on text with no scheduler event (run by ctest
as Scripts.SchedWaits; stdlib unittest, so it needs no pytest)."""
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts",
                      "sched_waits.py")


def switch(comm, pid, tid, cpu, t, prev, state, nxt, next_comm):
    return (f"{comm:>16} {pid}/{tid} [{cpu:03d}] {t:.6f}: sched:sched_switch: "
            f"prev_comm={comm} prev_pid={prev} prev_prio=120 prev_state={state} ==> "
            f"next_comm={next_comm} next_pid={nxt} next_prio=120")


def wakeup(comm, pid, tid, cpu, t, woken_comm, woken, target):
    return (f"{comm:>16} {pid}/{tid} [{cpu:03d}] {t:.6f}: sched:sched_wakeup: "
            f"comm={woken_comm} pid={woken} prio=120 target_cpu={target:03d}")


# Process 10 has threads a (10), b (12), c (13) and d (14); process 30 one
# thread, x (30). Times in seconds.
RECORDING = "\n".join([
    switch("swapper", 0, 0, 0, 1.000000, 0, "R", 10, "a"),      # cpu 0 runs a
    switch("x", 30, 30, 1, 1.000000, 30, "S", 0, "swapper/1"),  # cpu 1 goes idle
    wakeup("a", 10, 10, 0, 1.000000, "b", 12, 0),               # b woken onto busy cpu 0
    switch("a", 10, 10, 0, 1.005000, 10, "S", 12, "b"),         # b ran after 5 ms, cpu 1 idle
    wakeup("b", 10, 12, 0, 1.006000, "c", 13, 1),
    switch("swapper", 0, 0, 1, 1.006800, 0, "R", 13, "c"),      # c ran after 0.8 ms
    wakeup("b", 10, 12, 0, 1.006900, "d", 14, 0),
    switch("b", 10, 12, 0, 1.007000, 12, "R+", 14, "d"),        # d after 0.1 ms; b preempted
    switch("c", 10, 13, 1, 1.009000, 13, "S", 12, "b"),         # b after 2 ms, no CPU idle
    "a line that is no scheduler event",
]) + "\n"


def run_on(text):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "sched.txt")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return subprocess.run([sys.executable, SCRIPT, "--script", path], capture_output=True,
                              text=True, check=False)


def rows(stdout):
    out = {}
    for line in stdout.splitlines()[2:]:
        fields = line.split()
        if fields[-1] == "total":
            out["total"] = fields[:5]
        else:
            out[fields[-1]] = fields[:5]
    return out


class SchedWaits(unittest.TestCase):
    def test_waits_and_their_idle_share_are_the_hand_worked_ones(self):
        result = run_on(RECORDING)
        self.assertEqual(result.returncode, 0, result.stderr)
        # Span 1.000-1.009 s; cpu 1 idle 1.000-1.0068 (6.8 ms), cpu 0 never.
        self.assertIn("0.009 s on 2 CPUs, 0.007 CPU-seconds idle", result.stdout)
        got = rows(result.stdout)
        # b: 5 ms (all of it with cpu 1 idle: a long wait) + 2 ms (both
        # CPUs busy) = 7 ms runnable, 5 with a CPU idle, 2 waits.
        self.assertEqual(got["b"], ["7.0", "5.0", "2", "1", "5.0"])
        # c: 0.8 ms, all with cpu 1 idle: long too.
        self.assertEqual(got["c"], ["0.8", "0.8", "1", "1", "0.8"])
        # d: 0.1 ms with both CPUs busy, left out of the table (under 0.5 ms
        # with a CPU idle, no long wait) but in the totals.
        self.assertNotIn("d", got)
        self.assertEqual(got["total"], ["7.9", "5.8", "4", "2", "5.8"])
        self.assertIn("pid 10", result.stdout)

    def test_text_without_scheduler_events_is_refused(self):
        result = run_on("nothing here\n")
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("no sched_switch or sched_wakeup event", result.stderr)


if __name__ == "__main__":
    unittest.main()
