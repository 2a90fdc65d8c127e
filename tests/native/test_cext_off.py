"""``CMHASH_C_OFF``, the developer switch that leaves pieces of C to their Python
references (native/cext.py): every name it takes gives the same output as all C on, and
any other value is a one-line usage error (exit 2), never an internal error (exit 3)."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest
from conftest import ROOT

from cmhash.native import cext

STREAM = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n"
    "    spec:\n      containers:\n      - name: c\n        envFrom:\n        - configMapRef:\n"
    "            name: cfg\n        - secretRef:\n            name: s\n---\n"
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  k: v\n---\n"
    "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\nstringData:\n  p: hunter2\n"
)


class _Res(NamedTuple):
    code: int
    stdout: bytes
    stderr: bytes


def _run(value: str, tmp_path: Path, *args: str) -> _Res:
    """A real process: what CMHASH_C_OFF turns off is bound when modules are imported."""
    path = tmp_path / "in.yaml"
    path.write_text(STREAM)
    env = {**os.environ, "CMHASH_C_OFF": value}
    done = subprocess.run(
        [sys.executable, "-m", "cmhash", *args, "--no-config", str(path)],
        capture_output=True,
        env=env,
        check=False,
        timeout=120,
    )
    return _Res(done.returncode, done.stdout, done.stderr)


@pytest.fixture(scope="module")
def all_on(tmp_path_factory: pytest.TempPathFactory) -> _Res:
    return _run("", tmp_path_factory.mktemp("on"))


@pytest.mark.parametrize("name", cext.NAMES)
def test_every_name_runs_its_python_reference_alike(
    name: str, tmp_path: Path, all_on: _Res
) -> None:
    res = _run(name, tmp_path)
    assert (res.code, res.stdout, res.stderr) == (0, all_on.stdout, all_on.stderr)
    assert b"checksum/config" in res.stdout


def test_node_turns_the_whole_tree_builder_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every entry point of _ctree reads C nodes: with the Python Node, none is bound
    (this was a TypeError at import, exit 3)."""
    monkeypatch.setenv("CMHASH_C_OFF", "Node")
    assert cext.ctree() is None
    assert cext.function("cuts") is None
    monkeypatch.setenv("CMHASH_C_OFF", "cuts")
    assert (cext.ctree() is None) == (importlib.util.find_spec("cmhash.native._ctree") is None)


def test_all_names_together(tmp_path: Path, all_on: _Res) -> None:
    res = _run(" , ".join(cext.NAMES) + ",", tmp_path, "--workers", "2")
    assert (res.code, res.stdout) == (0, all_on.stdout)


@pytest.mark.parametrize(
    ("value", "hint"),
    [
        ("node", "'node' (Node?)"),
        ("NODE", "'NODE' (Node?)"),
        ("Build", "'Build' (build?)"),
        ("buidl", "'buidl';"),
        ("build,get", "'get';"),  # moved back to Python: no longer a name
        ("cjson", "'cjson';"),
        ("_ctree", "'_ctree';"),
        ("\u00e9", "'\u00e9';"),
        ("build\nnode", "'build\\nnode';"),  # one line: a control character escaped
        ("\x1b[2J", "'\\x1b[2J';"),
    ],
)
def test_another_value_is_a_usage_error(value: str, hint: str, tmp_path: Path) -> None:
    for args in ((), ("explain",)) if value == "node" else ((),):
        res = _run(value, tmp_path, *args)
        assert res.code == 2, res.stderr
        assert res.stdout == b""
        line = res.stderr.decode()
        assert line.count("\n") == 1 and line.startswith("cmhash: CMHASH_C_OFF: unknown name")
        assert hint in line
        assert ", ".join(cext.NAMES) in line
        assert "hunter2" not in line


def test_the_names_are_what_the_code_consults() -> None:
    """NAMES is exactly the names native/cext.py's callers ask for, and bench/c_gains.py
    measures each of them (a name it lists that nothing consults is refused now)."""
    asked = set()
    for path in (ROOT / "src" / "cmhash").rglob("*.py"):
        text = path.read_text()
        asked |= set(re.findall(r"(?:cext\.)?(?:function|off)\(\s*\"(\w+)\"", text))
        asked |= set(re.findall(r"optional\(\"cmhash\.native\.(\w+)\"\)", text))
    asked.discard("name")  # (cext.py's own docstring)
    assert asked == set(cext.NAMES)
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import c_gains
    finally:
        sys.path.remove(str(ROOT / "bench"))
    assert set(c_gains.ENTRIES) == set(cext.NAMES)
