"""cmhash report never shows a Secret's value, nor any form a reader decodes back to it,
in any format: not JSON-escaped inside a list shown as JSON (a non-ASCII character, a
quote, a backslash, a tab), not its first characters where a long value is cut, not as a
restart reason, a ConfigMap key or a name. tests/fixtures/report-secrets/ holds the
shapes: one Secret each, its values copied into a Deployment's args, command and env,
a ConfigMap's value, key and name, and a cmhash.io/restart reason."""

from __future__ import annotations

import base64
import json
import re

import pytest
import yaml
from conftest import ROOT, run_cmhash

CASE = ROOT / "tests" / "fixtures" / "report-secrets"
FORMATS = ("json", "markdown", "text", "codequality")


def report(old: str, new: str, fmt: str) -> str:
    res = run_cmhash(["report", "--no-config", "--format", fmt, old, new], cwd=CASE)
    assert res.code == 0, res.stderr
    return res.out + res.stderr


def secret_values(*names: str) -> list[str]:
    """The values of every Secret of the fixtures, decoded."""
    out = []
    for name in names:
        for doc in yaml.safe_load_all((CASE / name).read_text()):
            if doc and doc.get("kind") == "Secret":
                out += [base64.b64decode(v).decode() for v in doc["data"].values()]
    return out


_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|.)", re.DOTALL)
_NAMED = {"n": "\n", "r": "\r", "t": "\t"}


def _unescape(text: str) -> str:
    """One level of the escapes a reader undoes: JSON's and Python's (\\u00e4, \\x1b,
    \\", \\\\, \\t), and Markdown's (\\|, \\*)."""

    def one(m: re.Match[str]) -> str:
        e = m.group(1)
        if len(e) > 1:
            return chr(int(e[1:], 16))
        return _NAMED.get(e, e)

    return _ESCAPE.sub(one, text)


def views(text: str) -> list[str]:
    """``text`` as a reader may read it: as it is, and with up to three levels of
    escapes undone (a list shown as JSON, in a JSON report, in a Markdown cell)."""
    out = [text]
    for _ in range(3):
        out.append(_unescape(out[-1]))
    return out


def leaked(text: str, values: list[str], prefix: int = 8) -> list[str]:
    """Each value (or its first ``prefix`` characters) found in any view of ``text``."""
    return sorted({v for view in views(text) for v in values if v.strip()[:prefix] in view})


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_value_escaped_before_masking_is_masked(fmt: str) -> None:
    # args and command are shown as compact JSON: p\u00e4ss..., sec\"ret\\back, tab\t...
    values = secret_values("escaped-old.yaml", "escaped-new.yaml")
    assert any(not v.isascii() for v in values) and any("\t" in v for v in values)
    out = report("escaped-old.yaml", "escaped-new.yaml", fmt)
    assert leaked(out, values) == []


def test_escaped_values_masked_in_place() -> None:
    data = json.loads(report("escaped-old.yaml", "escaped-new.yaml", "json"))
    causes = {c["field"]: c for c in data["restart"][0]["causes"]}
    assert causes["spec.containers[c].args"]["new"] == '["***","***","***","1"]'
    assert causes["spec.containers[c].command"]["new"] == '["sh","-c","echo *** 1"]'


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_long_value_is_cut_once_masked(fmt: str) -> None:
    # the value starts 95 characters into an argument, 108 into an env value and 185
    # into a ConfigMap line: past the 120 and 200 characters shown, it is cut through
    values = secret_values("cut-old.yaml", "cut-new.yaml")
    out = report("cut-old.yaml", "cut-new.yaml", fmt)
    assert leaked(out, values, prefix=6) == []


def test_values_are_cut_at_120_and_lines_at_200_characters() -> None:
    data = json.loads(report("cut-old.yaml", "cut-new.yaml", "json"))
    causes = {c["field"]: c for c in data["restart"][0]["causes"] if "field" in c}
    for field in ("spec.containers[c].args", "spec.containers[c].env[E]"):
        value = causes[field]["new"]
        assert len(value) == 120 and value.endswith("zz…") and "***-zz" in value
    (diff,) = data["configs"][0]["valueDiffs"].values()
    old, new = diff.split("\n")[1:3]  # (after the hunk header) differ in their first character
    assert old.startswith("-0aaa") and new.startswith("+1aaa") and "a***-zz" in new
    assert len(old) == len(new) == 201 and new.endswith("z…")
