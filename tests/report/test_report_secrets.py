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
from pathlib import Path

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


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_value_as_a_restart_reason_a_key_or_a_name_is_masked(fmt: str) -> None:
    # Secret s holds k8stokenabc123xyz (NEW's key of ConfigMap cfg, and inside the name
    # of ConfigMap app-k8stokenabc123xyz) and restart-reason-secret-444 (the workload's
    # cmhash.io/restart reason)
    values = secret_values("names-old.yaml", "names-new.yaml")
    out = report("names-old.yaml", "names-new.yaml", fmt)
    assert leaked(out, values) == []


def test_names_and_keys_masked_in_place_and_the_report_still_whole() -> None:
    data = json.loads(report("names-old.yaml", "names-new.yaml", "json"))
    (web,) = data["restart"]
    assert [c.get("name") or c["change"] for c in web["causes"]] == [
        "app-***",
        "cfg",
        "restart requested: ***",
    ]
    assert web["causes"][1]["keys"] == ["k0", "***"]
    configs = {c["name"]: c for c in data["configs"]}
    assert configs["cfg"]["keysAdded"] == ["***"] and "***" in configs["cfg"]["valueDiffs"]
    assert configs["app-***"]["usedBy"] == ["Deployment/web -n shop"]
    # cmhash's own words stay: a kind, a change, an outcome are never masked
    assert (web["kind"], web["outcome"], configs["cfg"]["change"]) == (
        "Deployment",
        "rolls",
        "changed",
    )


def test_a_secret_value_equal_to_one_of_cmhashs_words_leaves_them(tmp_path: Path) -> None:
    # a Secret whose value is "Deployment" or "changed": the kinds and changes stay,
    # the namespace that holds the value does not; two namespaces masked alike add up
    (tmp_path / "old.yaml").write_text(names_pair(0))
    (tmp_path / "new.yaml").write_text(names_pair(1))
    res = run_cmhash(
        ["report", "--no-config", "--format", "json", "old.yaml", "new.yaml"], cwd=tmp_path
    )
    data = json.loads(res.out)
    assert {w["kind"] for w in data["restart"]} == {"Deployment"}
    assert data["summary"]["restartByNamespace"] == {"team-***": 2}
    assert {c["change"] for c in data["configs"]} == {"changed"}
    import jsonschema

    schema = json.loads((ROOT / "src" / "cmhash" / "schemas" / "report.schema.json").read_text())
    jsonschema.validate(data, schema)


def names_pair(n: int) -> str:
    docs = []
    for ns in ("team-a-secret-ns-1", "team-b-secret-ns-2"):
        words = base64.b64encode(b"Deployment").decode(), base64.b64encode(b"changed").decode()
        ns_value = base64.b64encode(ns.removeprefix("team-").encode()).decode()
        docs.append(
            f"apiVersion: v1\nkind: Secret\nmetadata: {{name: s, namespace: {ns}}}\n"
            f"data: {{kind: {words[0]}, change: {words[1]}, ns: {ns_value}}}\n---\n"
            f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c, namespace: {ns}}}\n"
            f"data: {{k: '{n}'}}\n---\n"
            f"apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web, namespace: {ns}}}\n"
            "spec:\n  selector: {matchLabels: {app: web}}\n  template:\n"
            "    metadata: {labels: {app: web}}\n    spec:\n      containers:\n"
            "      - {name: c, image: 'app:1', envFrom: [{configMapRef: {name: c}}]}\n"
            "      volumes: [{name: s, secret: {secretName: s}}]\n"
        )
    return "---\n".join(docs)


def test_a_fingerprint_is_no_hash_of_a_secret_value() -> None:
    # a finding about ConfigMap app-k8stokenabc123xyz: its fingerprint is taken of the
    # masked name, so it is the same whatever the value was
    from cmhash.findings import Code, Finding
    from cmhash.model import Level
    from cmhash.report.compare import _fingerprint
    from cmhash.report.redact import Masker

    def finding(name: str) -> Finding:
        return Finding("a.yaml", 1, 1, Level.WARNING, Code.EMPTY_INPUT, f"{name!r} is odd")

    masker = Masker(["k8stokenabc123xyz", "k8stokenzzz999xyz"])
    one, two = finding("app-k8stokenabc123xyz"), finding("app-k8stokenzzz999xyz")
    assert _fingerprint(one, masker) == _fingerprint(two, masker) != _fingerprint(one)


def test_the_one_environment_error_masks_a_value_in_a_name(tmp_path: Path) -> None:
    # two directories define the ConfigMap whose name holds a Secret's value: the
    # report refuses (one environment at a time), and its error masks the value too
    text = (CASE / "names-new.yaml").read_text()
    # prod: only ConfigMap app-k8stokenabc123xyz
    for env, body in (("dev", text), ("prod", text.split("---\n")[2])):
        (tmp_path / "envs" / env).mkdir(parents=True)
        (tmp_path / "envs" / env / "all.yaml").write_text(body)
    res = run_cmhash(["report", "--no-config", "envs", "envs"], cwd=tmp_path)
    assert res.code == 2
    assert "ConfigMap 'app-***' is defined in several directories" in res.stderr
    assert leaked(res.stderr, secret_values("names-new.yaml")) == []
