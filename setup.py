"""Builds the csan Python package for pip: the pure-Python modules of python/csan plus the
extensions csan._native (the scorer) and csan._inference (the models), which the project's
CMake build makes (targets csan_python and csan_python_inference).

The CMake build folder is $CSAN_BUILD_DIR, by default build/ (tools/build.sh's): an
existing one is reused (only the extensions and the libraries they need are built);
otherwise it is configured for the Python running pip. setuptools' own files go inside
it, so the source tree stays clean.
"""

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
BUILD = Path(os.environ.get("CSAN_BUILD_DIR", ROOT / "build")).resolve()
SETUPTOOLS_DIR = BUILD / "python-setuptools"


def project_version() -> str:
    match = re.search(r"project\(csan VERSION ([0-9.]+)", (ROOT / "CMakeLists.txt").read_text(encoding="utf-8"))
    if not match:
        raise RuntimeError("CMakeLists.txt: no 'project(csan VERSION x.y.z)' line")
    return match.group(1)


class CMakeExtension(build_ext):
    """Builds csan's extensions with CMake instead of compiling sources itself."""

    TARGETS = {"csan._native": "csan_python", "csan._inference": "csan_python_inference"}

    def build_extension(self, ext: Extension) -> None:
        if not (BUILD / "CMakeCache.txt").exists():
            configure = ["cmake", "-S", str(ROOT), "-B", str(BUILD), "-DCMAKE_BUILD_TYPE=Release"]
            subprocess.run(configure + [f"-DPython_EXECUTABLE={sys.executable}"], check=True)
        jobs = str(os.cpu_count() or 1)
        target_name = self.TARGETS[ext.name]
        subprocess.run(["cmake", "--build", str(BUILD), "--target", target_name, "--parallel", jobs], check=True)
        module = ext.name.split(".")[-1]
        built = BUILD / "python" / "csan" / (module + sysconfig.get_config_var("EXT_SUFFIX"))
        if not built.exists():
            raise RuntimeError(
                f"{built} was not built: {BUILD} is configured for another Python than {sys.executable} "
                "(set CSAN_BUILD_DIR to a new folder, or reconfigure with -DPython_EXECUTABLE=...)"
            )
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, target)


SETUPTOOLS_DIR.mkdir(parents=True, exist_ok=True)
setup(
    version=project_version(),
    ext_modules=[Extension(name, sources=[]) for name in CMakeExtension.TARGETS],
    cmdclass={"build_ext": CMakeExtension},
    options={"build": {"build_base": str(SETUPTOOLS_DIR)}, "egg_info": {"egg_base": str(SETUPTOOLS_DIR)}},
)
