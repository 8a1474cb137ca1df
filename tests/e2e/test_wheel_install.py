"""The built wheel works outside the checkout: specs and machine files travel as package data.

Builds the wheel from a copy of the sources (so the checkout gets no ``build/``), installs it with
``--no-index --no-deps`` into a fresh venv whose path ends with this interpreter's site-packages
(numpy, simpy, pip come from there: no network; a ``.pth`` line adds the directories without running
their ``.pth`` files, so an editable install of the checkout stays out), then runs an example from an
unrelated directory with no PYTHONPATH.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import venv
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import EXAMPLES, ROOT

SOURCES = ("pyproject.toml", "setup.py", "MANIFEST.in", "LICENSE", "README.md", "CHANGELOG.md",
           "isa_specs", "emulator", "compiler")


BUILT: dict[str, Path] = {}


def _setuptools_can_build_offline() -> bool:
    try:
        import setuptools
    except ImportError:
        return False
    major = int(setuptools.__version__.split(".")[0])
    return major >= 77  # pyproject's build-system floor (SPDX license field, built-in bdist_wheel)


pytestmark = [
    pytest.mark.packaging,
    pytest.mark.skipif(not _setuptools_can_build_offline(),
                       reason="needs setuptools>=77 in this environment (the [test] extra installs it)"),
]


def _clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYPTOEMU_ISA_DIR")}
    env["PIP_NO_INDEX"] = "1"  # never reach for the network, whatever pip.conf says
    return env


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """A venv with the freshly built wheel installed; returns its bin directory."""
    work = tmp_path_factory.mktemp("wheel")
    src = work / "src"
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            src.mkdir(exist_ok=True)
            shutil.copy2(path, src / name)
    dist = work / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-build-isolation", "--no-deps",
                    "--no-index", "-w", str(dist), str(src)], check=True, env=_clean_env(), cwd=work)
    (wheel,) = dist.glob("pyptoemu-*.whl")
    env_dir = work / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    bindir = env_dir / ("Scripts" if os.name == "nt" else "bin")
    python = bindir / ("python.exe" if os.name == "nt" else "python")
    venv_site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               check=True, capture_output=True, text=True).stdout.strip()
    parents = [p for p in site.getsitepackages() + [site.getusersitepackages()] if Path(p).is_dir()]
    Path(venv_site, "parent_site.pth").write_text("\n".join(parents) + "\n")
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-index", "--no-deps", str(wheel)],
                   check=True, env=_clean_env(), cwd=work)
    BUILT["wheel"] = wheel  # for the metadata test
    return bindir


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=cwd, env=_clean_env(), capture_output=True, text=True, timeout=120,
                          check=False)


def test_wheel_imports_from_the_venv_and_finds_its_specs(installed, tmp_path):
    code = ("import ptoisa.machine, pyptoemu, pypto.language; "
            "print(pyptoemu.__file__); print(ptoisa.machine.isa_dir()); print(pyptoemu.__version__)")
    res = _run([str(installed / "python"), "-c", code], cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    module_file, spec_dir, version = res.stdout.split("\n")[:3]
    venv_root = installed.parent.resolve()
    assert Path(module_file).resolve().is_relative_to(venv_root), module_file
    assert Path(spec_dir).resolve() == (Path(module_file).resolve().parents[1] / "ptoisa" / "isa_specs")
    assert (Path(spec_dir) / "machines" / "a2a3.yaml").is_file()
    import pyptoemu

    assert version == pyptoemu.__version__


def test_wheel_carries_license_types_and_plugin(installed):
    import zipfile

    with zipfile.ZipFile(BUILT["wheel"]) as whl:
        names = set(whl.namelist())
        meta = next(whl.read(n).decode() for n in names if n.endswith(".dist-info/METADATA"))
        entry_points = next(whl.read(n).decode() for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert {"ptoisa/py.typed", "pyptoemu/py.typed", "pypto/py.typed"} <= names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert "License-Expression: Apache-2.0" in meta and "Provides-Extra: plot" in meta
    assert "[pytest11]" in entry_points and "pyptoemu = pyptocli:main" in entry_points


def test_installed_script_runs_an_example_from_another_directory(installed, tmp_path):
    a = np.arange(32 * 32, dtype=np.float32).reshape(32, 32)
    b = np.full((32, 32), 0.5, np.float32)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    res = _run([str(installed / "pyptoemu"), "run", str(EXAMPLES / "vadd_32x32.pto"), "--json",
                "--input", "arg0=a.npy", "--input", "arg1=b.npy", "--output-dir", "out"], cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["cycles"] > 0
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "arg2.npy"), a + b)
    version = _run([str(installed / "python"), "-m", "pyptoemu", "--version"], cwd=tmp_path)
    assert version.returncode == 0 and version.stdout.startswith("pyptoemu "), version
    compile_help = _run([str(installed / "python"), "-m", "pyptoemu", "compile", "--help"], cwd=tmp_path)
    assert compile_help.returncode == 0 and "usage: pyptoemu compile" in compile_help.stdout, compile_help
