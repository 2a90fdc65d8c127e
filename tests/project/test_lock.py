"""requirements/ci.txt, the lock of CI's first run (.ci/run, CONTRIBUTING.md "The lock"),
covers what pyproject.toml asks for: a dependency added or re-bounded without refreshing
the lock fails here, not in a CI run that installs something else."""

from __future__ import annotations

import re

import pytest
from conftest import ROOT

tomllib = pytest.importorskip("tomllib")
requirements = pytest.importorskip("packaging.requirements")

LOCK = ROOT / "requirements" / "ci.txt"


def _pins() -> dict[str, str]:
    pins = {}
    for line in LOCK.read_text().splitlines():
        m = re.match(r"^([A-Za-z0-9._-]+)==([^ ;\\]+)", line)
        if m:
            pins[re.sub(r"[-_.]+", "-", m.group(1)).lower()] = m.group(2)
    return pins


def test_every_dependency_is_locked_within_its_bounds() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = list(project["dependencies"])
    for extra in ("test", "dev"):
        wanted += [r for r in project["optional-dependencies"][extra] if "cmhash" not in r]
    pins = _pins()
    for spec in wanted:
        req = requirements.Requirement(spec)
        name = re.sub(r"[-_.]+", "-", req.name).lower()
        assert name in pins, f"{req.name} is not in requirements/ci.txt: run requirements/lock.sh"
        assert req.specifier.contains(pins[name], prereleases=True), (spec, pins[name])


def test_every_pin_has_a_hash() -> None:
    text = LOCK.read_text()
    blocks = re.split(r"\n(?=[A-Za-z0-9])", text)
    pinned = [b for b in blocks if "==" in b.split("\n", 1)[0]]
    assert pinned and all("--hash=sha256:" in b for b in pinned)
