#!/usr/bin/python3
"""Samples/s of the PyTorch DeepFM (python/examples/deepfm_torch.py) against
`libra train --model deepfm` on the same data, batch, workers and servers,
plain and with Libra's switch, in one run; writes a JSON report
(docs/PERFORMANCE.md, "PyTorch against the C++ trainer").

    /usr/bin/python3 scripts/bench_torch.py --build build --out bench-torch.json

Runs are interleaved (C++ plain, Python plain, C++ Libra, Python Libra, and
again for --rounds rounds); each figure is the median over rounds of the
training epochs' samples/s (the held-out evaluation excluded). Uses Debian's
/usr/bin/python3 for the example (it needs python3-torch).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "python", "examples", "deepfm_torch.py")


def run(cmd, env=None):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          env=env)
    if proc.returncode != 0:
        sys.exit(f"bench_torch: {' '.join(cmd)} failed:\n{proc.stdout}")
    return proc.stdout


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build", default="build", help="the CMake build directory")
    p.add_argument("--data", help="Criteo TSV (default: libra gen-data --rows --keys)")
    p.add_argument("--rows", type=int, default=200000)
    p.add_argument("--keys", type=int, default=100000)
    p.add_argument("--batch", type=int, default=1000)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("-s", "--servers", type=int, default=2)
    p.add_argument("-w", "--workers", type=int, default=2)
    p.add_argument("--capacity", default="0", help="Libra's --capacity (0: the whole switch)")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--out", default="bench-torch.json")
    p.add_argument("--baseline", help="another version of the example (a file), run plain "
                   "in the same rounds as python_baseline_plain: before/after from one run")
    p.add_argument("--profile", action="store_true",
                   help="the examples time their phases (ms per iteration in the report)")
    a = p.parse_args()
    libra = os.path.join(a.build, "tools", "libra", "libra")
    env = dict(os.environ, PYTHONPATH=os.path.join(os.path.abspath(a.build), "python"))
    scratch = tempfile.mkdtemp(prefix="bench-torch-")
    data = a.data or os.path.join(scratch, "ctr.tsv")
    if not a.data:
        run([libra, "gen-data", "--out", data, "--rows", str(a.rows), "--keys", str(a.keys),
             "--format", "criteo"])
    common = ["--data", data, "--batch", str(a.batch), "--epochs", str(a.epochs)]
    job = ["-s", str(a.servers), "-w", str(a.workers)]
    names = ["cpp_plain", "python_plain", "cpp_libra", "python_libra"]
    if a.baseline:
        names.insert(1, "python_baseline_plain")
    results = {k: [] for k in names}
    losses = {k: [] for k in results}
    phases = {k: [] for k in results if k.startswith("python")}
    for r in range(a.rounds):
        for name in results:
            report = os.path.join(scratch, f"{name}-{r}.json")
            start = time.time()
            if name.startswith("cpp"):
                cmd = [libra, "train", "--model", "deepfm", *job, *common, "--json", report]
                if name == "cpp_libra":
                    cmd += ["--libra", "--capacity", a.capacity]
                run(cmd, env)
                with open(report) as f:
                    epochs = json.load(f)["epochs"]
            else:
                cmd = [libra, "launch", *job]
                if name == "python_libra":
                    cmd += ["--local-switch", "--capacity", a.capacity]
                example = a.baseline if name == "python_baseline_plain" else EXAMPLE
                extra = ["--profile"] if a.profile else []
                run(cmd + ["--", "/usr/bin/python3", example, *common, *extra, "--json", report],
                    env)
                with open(report) as f:
                    got = json.load(f)
                epochs = got["epochs"]
                if "ms_per_iteration" in got:
                    phases[name].append(got["ms_per_iteration"])
            rate = statistics.mean(e["samples_per_second"] for e in epochs)
            results[name].append(rate)
            losses[name].append(epochs[-1]["test_log_loss"])
            print(f"round {r + 1} {name}: {rate:.0f} samples/s, held-out log loss "
                  f"{epochs[-1]['test_log_loss']:.5f} ({time.time() - start:.1f} s)", flush=True)
    median = {k: statistics.median(v) for k, v in results.items()}
    out = {"config": {"data": a.data or f"gen-data --rows {a.rows} --keys {a.keys} --format criteo",
            "batch": a.batch, "epochs": a.epochs, "servers": a.servers, "workers": a.workers,
            "capacity": a.capacity, "rounds": a.rounds},
           "samples_per_second": results, "median": median, "test_log_loss": losses,
           "ms_per_iteration": {k: v for k, v in phases.items() if v},
           "ratio_python_to_cpp": {"plain": median["python_plain"] / median["cpp_plain"],
                                   "libra": median["python_libra"] / median["cpp_libra"]}}
    if a.baseline:
        out["ratio_python_to_cpp"]["baseline_plain"] = (median["python_baseline_plain"] /
                                                       median["cpp_plain"])
    with open(a.out, "w") as f:
        json.dump(out, f, indent=1)
    print(f"python/C++ samples/s: plain {out['ratio_python_to_cpp']['plain']:.2f}, "
          f"with Libra {out['ratio_python_to_cpp']['libra']:.2f}; report {a.out}")


if __name__ == "__main__":
    main()
