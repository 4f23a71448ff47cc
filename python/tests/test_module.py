"""The module without a job: import, and runtime errors as libra.Error."""
import os
import subprocess

import pytest

import libra
from conftest import python


def test_import_exposes_the_api():
    for name in ["start", "finalize", "barrier", "is_worker", "is_server", "is_scheduler",
                 "rank", "num_workers", "num_servers", "KVWorker", "KVServer", "run_server",
                 "Error", "server_key_ranges"]:
        assert hasattr(libra, name), name
    assert libra.MAX_KEY == 2**64 - 1
    assert issubclass(libra.Error, RuntimeError)


def test_calls_before_start_raise():
    with pytest.raises(libra.Error, match="call libra.start"):
        libra.rank()
    with pytest.raises(libra.Error, match="call libra.start"):
        libra.KVWorker()


def run(code, **env):
    full = {k: v for k, v in os.environ.items() if not k.startswith(("DMLC_", "LIBRA_"))}
    full["PYTHONPATH"] = os.environ.get("PYTHONPATH", "")
    full.update(env)
    return subprocess.run([python(), "-c", code], env=full, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=60)


START = ("import libra\n"
         "try:\n"
         "    libra.start()\n"
         "except libra.Error as e:\n"
         "    print('caught:', e)\n")


def test_a_bad_environment_is_a_python_exception_with_the_runtimes_message():
    proc = run(START, DMLC_ROLE="worker", DMLC_NUM_WORKER="two", DMLC_NUM_SERVER="1",
               DMLC_PS_ROOT_URI="127.0.0.1", DMLC_PS_ROOT_PORT="9")
    assert proc.returncode == 0, proc.stderr
    assert ("caught: environment variable DMLC_NUM_WORKER='two' is not an integer"
            in proc.stdout), proc.stdout + proc.stderr


def test_a_bad_libra_setting_is_a_python_exception():
    proc = run(START, DMLC_ROLE="worker", DMLC_NUM_WORKER="1", DMLC_NUM_SERVER="1",
               DMLC_PS_ROOT_URI="127.0.0.1", DMLC_PS_ROOT_PORT="9", LIBRA_SWITCH="nowhere")
    assert proc.returncode == 0, proc.stderr
    assert "caught:" in proc.stdout and "LIBRA_SWITCH" in proc.stdout, proc.stdout + proc.stderr
