"""Control and bidi characters from the input never reach the terminal raw: one-line
messages (stderr, CMHASH_LOG) and explain's text and Mermaid show them as escapes, as
the report does (visible.py); explain's JSON keeps the real strings (it is data)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cmhash

# names no API server accepts, but a hostile or broken render can hold
STREAM = (
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n"
    '  name: "a\\e[31mRED\\u202eb"\ndata: {k: v}\n---\n'
    "apiVersion: apps/v1\nkind: Deployment\n"
    'metadata: {name: "d\\e[2Jx\\a"}\nspec:\n  template:\n    spec:\n      containers:\n'
    "      - name: c\n        envFrom:\n"
    '        - configMapRef: {name: "a\\e[31mRED\\u202eb"}\n'
    '        - configMapRef: {name: "miss\\e]0;title\\a\\r"}\n'
)
RAW = ("\x1b", "\x07", "\u202e", "\r")


def _assert_escaped(text: str) -> None:
    for ch in RAW:
        assert ch not in text, (ch, text)
    assert "\\x1b[" in text


@pytest.mark.parametrize("args", [[], ["--check"], ["explain"], ["explain", "--format", "mermaid"]])
def test_no_control_character_reaches_the_terminal(tmp_path: Path, args: list[str]) -> None:
    f = tmp_path / "in.yaml"
    f.write_text(STREAM)
    log = tmp_path / "log"
    res = run_cmhash([*args, "--no-config", str(f)], env={"CMHASH_LOG": str(log)})
    assert res.code in (0, 1), res.stderr
    if args[:1] == ["explain"]:  # the findings are part of explain's output
        _assert_escaped(res.out)
        assert not any(ch in res.stderr for ch in RAW)
    else:  # the missing-reference warning names both
        _assert_escaped(res.stderr)
        _assert_escaped(log.read_text())


def test_explain_json_keeps_the_real_names(tmp_path: Path) -> None:
    f = tmp_path / "in.yaml"
    f.write_text(STREAM)
    res = run_cmhash(["explain", "--no-config", "--format", "json", str(f)])
    assert res.code == 0, res.stderr
    names = {w["name"] for w in json.loads(res.out)["workloads"]}
    assert names == {"d\x1b[2Jx\x07"}
