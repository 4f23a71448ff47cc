"""scripts/forced_floor.py on two small made-up reports whose floor is worked
out by hand below, and on reports it must refuse (run by ctest as
Scripts.ForcedFloor; stdlib unittest, so it needs no pytest)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts",
                      "forced_floor.py")


def plain_report():
    # 100 iterations, 0.5 s of CPU in all (0.2 s the server's): 5 ms an
    # iteration; 40,000 samples/s at 400 samples an iteration: 10 ms each.
    return {"config": {"model": "lr", "embedding_dim": 8, "total_batch": 400},
            "processes": [{"name": "server 0", "cpu_seconds": 0.2},
                          {"name": "worker 0", "cpu_seconds": 0.3}],
            "iterations": {"count": 100},
            "throughput": {"samples_per_second": 40000.0},
            "nodes": [{"role": "worker"}, {"role": "server"}]}


def forced_report():
    report = plain_report()
    report["processes"] = [{"name": "server 0", "cpu_seconds": 0.3},
                           {"name": "worker 0", "cpu_seconds": 0.5}]
    report["throughput"] = {"samples_per_second": 25000.0}
    # 10 hot epochs: per epoch 100 datagrams, 1,000 hot and 3,000 cold
    # values pushed, 1,000 added in the switch, 800 written, 4 UPDATEs,
    # 8 REPLICAs.
    report["nodes"] = [
        {"role": "worker", "hot_path": {"epochs_hot": 10, "hot_values_pushed": 10000,
                                        "cold_values_pushed": 30000}},
        {"role": "server", "hot_path": {"collector": {"written_values": 8000}}}]
    report["switch"] = {"events": {"values_aggregated": 10000, "update_packets": 40,
                                   "replicas_sent": 80},
                        "io": {"datagrams_received": 600, "datagrams_sent": 400}}
    return report


def run(plain, forced, *args):
    with tempfile.TemporaryDirectory() as d:
        paths = []
        for name, report in (("plain.json", plain), ("forced.json", forced)):
            paths.append(os.path.join(d, name))
            with open(paths[-1], "w", encoding="utf-8") as f:
                json.dump(report, f)
        return subprocess.run([sys.executable, SCRIPT, *paths, *args], capture_output=True,
                              text=True, check=False)


class ForcedFloor(unittest.TestCase):
    def test_the_floor_and_both_bounds_are_the_hand_worked_ones(self):
        # Prices: datagram 1 us, pack 10 ns, lookup 10 ns, switch 1 ns,
        # server 10 ns, replica 1 ns, MAC 1 us.
        result = run(plain_report(), forced_report(), "--datagram-us", "1", "--pack-ns", "10",
                     "--lookup-ns", "10", "--switch-ns", "1", "--server-ns", "10",
                     "--replica-ns", "1", "--mac-us", "1", "--cores", "2")
        self.assertEqual(result.returncode, 0, result.stderr)
        # kernel 2 x 100 x 1 us = 0.20 ms; workers 1,000 x 10 + 4,000 x 10
        # + 800 x 1 worker x 1 ns = 0.0508 ms, + 8 REPLICAs x 1 us = 0.0588;
        # switch 1,000 x 1 ns = 0.001; server 800 x 10 ns + 4 x 1 us =
        # 0.012; saved: the server's 2 ms an iteration x (1,000 - 800) /
        # 4,000 = 0.10. Floor 0.20 + 0.0588 + 0.001 + 0.012 - 0.10 = 0.1718.
        self.assertIn("plain 5.00 CPU ms an iteration, forced 8.00", result.stdout)
        self.assertIn("per hot epoch: 100 datagrams, 1000 hot and 3000 cold values pushed, "
                      "1000 added in the switch, 800 written", result.stdout)
        self.assertIn("kernel 0.20 + workers 0.06 + switch 0.00 + server 0.01 - saved 0.10 = "
                      "0.17 ms", result.stdout)
        # CPU: 5 / 5.1718 = 0.97; samples/s on 2 cores: 10 x 2 / 5.1718,
        # capped at 1; measured 5 / 8 and 25,000 / 40,000.
        self.assertIn("best CPU ratio 0.97; best samples/s ratio on 2 cores 1.00 (plain 10.00 ms "
                      "an iteration); measured CPU ratio 0.62, samples/s ratio 0.62",
                      result.stdout)

    def test_the_samples_bound_is_the_cpu_spread_over_the_cores(self):
        # A plain run that took 2.5 ms an iteration (160,000 samples/s) and
        # the same CPU: 2.5 x 2 / 5.1718 = 0.97, under the cap.
        plain = plain_report()
        plain["throughput"]["samples_per_second"] = 160000.0
        result = run(plain, forced_report(), "--datagram-us", "1", "--pack-ns", "10",
                     "--lookup-ns", "10", "--switch-ns", "1", "--server-ns", "10",
                     "--replica-ns", "1", "--mac-us", "1", "--cores", "2")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("best samples/s ratio on 2 cores 0.97 (plain 2.50 ms an iteration)",
                      result.stdout)

    def test_reports_in_the_wrong_order_or_without_a_hot_path_are_refused(self):
        swapped = run(forced_report(), forced_report())
        self.assertNotEqual(swapped.returncode, 0)
        self.assertIn("the report of a Libra run", swapped.stderr)
        no_hot_path = run(plain_report(), plain_report())
        self.assertNotEqual(no_hot_path.returncode, 0)
        self.assertIn("not the report of a run whose hot path ran", no_hot_path.stderr)


if __name__ == "__main__":
    unittest.main()
