"""`pip install ./python` into a fresh virtual environment, offline, with the
module the build made; then `import libra` and `import libra.torch` there,
without PYTHONPATH (docs/python.md, "Installing with pip")."""
import os
import subprocess

import pytest

from conftest import HERE, python

SOURCE = os.path.normpath(os.path.join(HERE, ".."))


def test_pip_installs_the_built_module_into_a_venv_offline(tmp_path):
    build = os.environ.get("LIBRA_BUILD_DIR")
    if not build:
        pytest.skip("LIBRA_BUILD_DIR is not set (run the tests through ctest)")
    venv = tmp_path / "venv"
    subprocess.run([python(), "-m", "venv", "--system-site-packages", str(venv)], check=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PIP_NO_CACHE_DIR"] = "1"
    before = set(os.listdir(SOURCE))
    proc = subprocess.run([str(venv / "bin" / "pip"), "install", "--no-build-isolation",
                           "--no-index", SOURCE], env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=240)
    assert proc.returncode == 0, proc.stdout
    assert set(os.listdir(SOURCE)) == before, "pip left files in the source tree"
    code = ("import libra, libra.torch, os; print(libra.MAX_KEY > 0, "
            "os.path.dirname(libra.__file__))")
    proc = subprocess.run([str(venv / "bin" / "python"), "-c", code], env=env, cwd=str(tmp_path),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.returncode == 0, proc.stdout
    installed, where = proc.stdout.split()
    assert installed == "True" and where.startswith(str(venv)), proc.stdout
