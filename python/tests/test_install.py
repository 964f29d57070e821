"""The package installs with pip from Debian's packages alone (no build backend to
download), both into a venv and with --user, and works there without PYTHONPATH."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Dict

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHECK = (
    "import csan, csan.metrics as m\n"
    "print(csan.__file__)\n"
    "print(m.corpus_chrf(['a small test'], [['a small test']]).score)\n"
)


def clean_environment(**extra: str) -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONUSERBASE")}
    env.update(PIP_NO_CACHE_DIR="1", PIP_DISABLE_PIP_VERSION_CHECK="1", **extra)
    return env


def install(python: str, tmp_path: Path, env: Dict[str, str], *options: str) -> None:
    if "CSAN_BUILD_DIR" not in os.environ:
        pytest.skip("CSAN_BUILD_DIR (the CMake build folder) is not set")
    command = [python, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "--quiet", *options, str(ROOT)]
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr


def check(python: str, tmp_path: Path, env: Dict[str, str], location: Path) -> None:
    done = subprocess.run([python, "-c", CHECK], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    installed, score = done.stdout.split()
    assert Path(installed).is_relative_to(location)
    assert float(score) == 100.0


def test_venv_install(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    # System site packages: Debian's setuptools and pip (and python3-torch) stay visible.
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    env = clean_environment()
    install(python, tmp_path, env)
    check(python, tmp_path, env, venv)


def test_user_install(tmp_path: Path) -> None:
    user_base = tmp_path / "user"
    env = clean_environment(PYTHONUSERBASE=str(user_base))
    # Debian marks its Python as externally managed (PEP 668): --user needs the override.
    install(sys.executable, tmp_path, env, "--user", "--break-system-packages")
    check(sys.executable, tmp_path, env, user_base)
