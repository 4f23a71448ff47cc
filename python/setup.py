"""Packs the package's Python files with the extension module the project's
CMake build made (pyproject.toml has the metadata; docs/python.md the
commands). The module comes from $LIBRA_BUILD_DIR (default: build/ at the
top of the source tree); if it is not there, CMake builds it in that
directory first, for the interpreter running this (no network needed).
Build byproducts go to a temporary directory, not into the source tree."""
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MODULE = "_libra" + sysconfig.get_config_var("EXT_SUFFIX")
SCRATCH = tempfile.mkdtemp(prefix="libra-pip-")


def built_module():
    build = os.path.abspath(os.environ.get("LIBRA_BUILD_DIR", os.path.join(ROOT, "build")))
    path = os.path.join(build, "python", "libra", MODULE)
    if not os.path.exists(path):
        subprocess.check_call(["cmake", "-S", ROOT, "-B", build, "-G", "Ninja",
                               "-DCMAKE_BUILD_TYPE=Release",
                               f"-DPython3_EXECUTABLE={sys.executable}"])
        subprocess.check_call(["cmake", "--build", build, "--target", "libra_python"])
    if not os.path.exists(path):
        sys.exit(f"setup.py: the build made no {path} (is pybind11-dev installed?)")
    return path


class BuildWithModule(build_py):
    def run(self):
        super().run()
        target = os.path.join(self.build_lib, "libra")
        os.makedirs(target, exist_ok=True)
        shutil.copy2(built_module(), os.path.join(target, MODULE))


class BinaryDistribution(Distribution):
    def has_ext_modules(self):  # a platform wheel: the module is compiled
        return True


setup(cmdclass={"build_py": BuildWithModule}, distclass=BinaryDistribution,
      options={"build": {"build_base": os.path.join(SCRATCH, "build")},
               "egg_info": {"egg_base": SCRATCH}})
