"""scripts/epoch_timeline.py on made-up LIBRA_TRACE output whose timeline is
known: a hot job's chain after worker 0's push, a plain job's after worker
0's previous pull, and output with no trace (run by ctest as
Scripts.EpochTimeline; stdlib unittest)."""
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts",
                      "epoch_timeline.py")


def run(lines):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "out.txt")
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        return subprocess.run([sys.executable, SCRIPT, path], capture_output=True, text=True,
                              check=False)


def rows(stdout):
    """{"event node": [median, p10, p90]} from the script's table."""
    table = {}
    for line in stdout.splitlines()[2:]:
        words = line.split()
        # Names are two words ("push w0"); "next push w0" is three.
        split = 3 if words[0] == "next" else 2
        table[" ".join(words[:split])] = [float(x) for x in words[split:]]
    return table


class EpochTimeline(unittest.TestCase):
    def test_a_hot_job_is_timed_from_worker_0s_push(self):
        # 40 epochs, one every 10 ms: worker 0 pushes at the epoch's start,
        # packs 100 us later, its FIN is ACKed at 300 us in even epochs and
        # 500 us in odd ones, the server's READY at 700 us; other lines and
        # a line without a node are ignored.
        lines = ["training lr on d.libsvm", "TRACE push 0 1 5"]
        for e in range(40):
            t0 = 1_000_000_000 + e * 10_000_000
            fin = 300_000 if e % 2 == 0 else 500_000
            lines += [f"[worker 0] TRACE push 0 {e} {t0}",
                      f"[worker 0] TRACE packed 0 {e} {t0 + 100_000}",
                      f"[worker 0] TRACE fin_acked 0 {e} {t0 + fin}",
                      f"[server 0] TRACE ready 0 {e} {t0 + 700_000}",
                      "[worker 1] an unrelated line"]
        result = run(lines)
        self.assertEqual(result.returncode, 0, result.stderr)
        # The first and last five of the 40 left out.
        self.assertIn("30 epochs; microseconds after worker 0's push began", result.stdout)
        table = rows(result.stdout)
        self.assertEqual(table["push w0"], [0, 0, 0])
        self.assertEqual(table["packed w0"], [100, 100, 100])
        self.assertEqual(table["fin_acked w0"], [400, 300, 500])
        self.assertEqual(table["ready s0"], [700, 700, 700])
        self.assertEqual(table["next push w0"], [10000])
        # Events in the chain's order, not the alphabet's.
        names = [line.split()[0] for line in result.stdout.splitlines()[2:]]
        self.assertEqual(names, ["push", "packed", "fin_acked", "ready", "next"])

    def test_a_plain_job_is_timed_from_worker_0s_previous_pull(self):
        lines = []
        for e in range(10):
            t0 = e * 4_000_000
            lines += [f"[worker 0] TRACE round_applied 0 {e} {t0 + 1_000_000}",
                      f"[worker 0] TRACE pulled 0 {e} {t0 + 3_000_000}"]
        result = run(lines)
        self.assertEqual(result.returncode, 0, result.stderr)
        # Epoch 0 has no previous pull: 9 epochs, each 4 ms after the last.
        self.assertIn("9 epochs; microseconds after worker 0's previous pull returned",
                      result.stdout)
        table = rows(result.stdout)
        self.assertEqual(table["round_applied w0"], [2000, 2000, 2000])
        self.assertEqual(table["pulled w0"], [4000, 4000, 4000])

    def test_output_without_a_trace_is_named(self):
        result = run(["training lr on d.libsvm", "samples/s 1000"])
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("LIBRA_TRACE=1", result.stderr)


if __name__ == "__main__":
    unittest.main()
