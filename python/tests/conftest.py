"""Shared helpers: run python/tests/job.py as a real job with `libra launch`.

ctest sets PYTHONPATH (the build tree's python/), LIBRA_BIN (the `libra`
binary) and LIBRA_PYTHON (the interpreter the module was built for)."""
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


def libra_bin():
    path = os.environ.get("LIBRA_BIN")
    if not path:
        pytest.skip("LIBRA_BIN is not set (run the tests through ctest)")
    return path


def python():
    return os.environ.get("LIBRA_PYTHON", sys.executable)


def launch(mode, servers=1, workers=2, switch=False, script="job.py", args=(), timeout=120):
    """Runs SCRIPT MODE on a local job; returns (exit status, output)."""
    cmd = [libra_bin(), "launch", "-s", str(servers), "-w", str(workers),
           "--timeout", str(timeout)]
    if switch:
        # The hot path from the second push on, with every sampled key hot:
        # by default the cost model may keep a loopback job plain.
        cmd += ["--local-switch", "--sample-epochs", "1", "--capacity", "0"]
    cmd += ["--", python(), os.path.normpath(os.path.join(HERE, script))]
    cmd += ([mode] if mode else []) + list(args)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=timeout + 30)
    return proc.returncode, proc.stdout


def assert_passed(mode, workers, status, output):
    assert status == 0, output
    passed = [line for line in output.splitlines() if line.endswith(f"PASS {mode}")]
    assert len(passed) == workers, output
