"""The table of how Kubernetes' YAML decoder (sigs.k8s.io/yaml's vendored go-yaml v2,
goyaml.v2/resolve.go) reads plain scalars, pinned value by value. A mistake here either
refuses a valid ConfigMap or lets through one the API server rejects."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cmhash

from cmhash.parse.k8syaml import plain_bool, plain_value, resolves_to_non_string

# (plain scalar, what go-yaml resolves it to)
TABLE = [
    # booleans: exactly these spellings (YAML 1.1's y/n and on/off included)
    *[
        (w, "bool")
        for w in ["y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"]
    ],
    *[
        (w, "bool")
        for w in ["n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"]
    ],
    ("yEs", "str"),
    ("tRUE", "str"),
    ("t", "str"),
    ("f", "str"),
    ("oN", "str"),
    # nulls
    ("~", "null"),
    ("null", "null"),
    ("Null", "null"),
    ("NULL", "null"),
    ("nULL", "str"),
    # integers: Go's ParseInt(s, 0, 64) after removing underscores; big ones too
    ("0", "int"),
    ("8080", "int"),
    ("-1", "int"),
    ("+1", "int"),
    ("1_000", "int"),
    ("0x1F", "int"),
    ("0X1f", "int"),
    ("0o17", "int"),
    ("0O17", "int"),
    ("017", "int"),
    ("0b101", "int"),
    ("-0b101", "int"),
    ("0x_1F", "int"),
    ("1__0", "int"),
    # out of int64 and uint64: a decimal one is a float (kubectl sends 1e+23), a hex,
    # octal or binary one a string (go-yaml v2 has no big integers)
    ("99999999999999999999999", "float"),
    ("18446744073709551615", "int"),
    ("-9223372036854775809", "float"),
    ("0x1FFFFFFFFFFFFFFFFFF", "str"),
    ("0o7777777777777777777777", "str"),
    # floats: go-yaml's yamlStyleFloat, finite
    ("1.5", "float"),
    ("1.", "float"),
    ("1e3", "float"),
    ("1E3", "float"),
    ("-1.5e-3", "float"),
    (".5", "float"),
    ("+.5", "float"),
    ("08", "float"),
    ("09.5", "float"),
    ("1_000.5", "float"),
    (".inf", "float"),
    (".Inf", "float"),
    ("-.INF", "float"),
    ("+.inf", "float"),
    (".nan", "float"),
    (".NaN", "float"),
    # strings: base-60 forms are NOT resolved (the reason for this table)
    ("03:00", "str"),
    ("16:9", "str"),
    ("1:30", "str"),
    ("12:30:45", "str"),
    ("-1:30", "str"),
    ("190:20:30", "str"),
    ("1:30.5", "str"),
    # strings: timestamps stay the text as written when decoded without a schema
    ("2024-01-01", "str"),
    ("2001-12-14t21:59:43.10-05:00", "str"),
    # strings: things that only look numeric
    ("1e400", "str"),
    (".5e400", "str"),
    ("0x", "str"),
    ("0b2", "str"),
    ("0x1p3", "str"),
    ("1e", "str"),
    ("E400", "str"),
    ("e5", "str"),
    ("1.2.3", "str"),
    ("12ab", "str"),
    ("_1", "str"),
    ("+", "str"),
    ("-", "str"),
    (".", "str"),
    (".5_0", "float"),  # (ParseFloat: an underscore between two digits; kubectl sends 0.5)
    ("._5", "str"),
    (".5__0", "str"),
    (".5_e1", "str"),
    ("inf", "str"),
    ("nan", "str"),
    ("Infinity", "str"),
    ("0.5.", "str"),
    ("١٢", "str"),
    ("1,000", "str"),
]


@pytest.mark.parametrize(("plain", "kind"), TABLE, ids=[p for p, _ in TABLE])
def test_resolution_table(plain: str, kind: str) -> None:
    assert resolves_to_non_string(plain) is (kind != "str")
    if kind == "bool":
        assert plain_bool(plain) is (plain.lower() in ("y", "yes", "true", "on"))
    else:
        assert plain_bool(plain) is None
    # the value the report compares (report/templates.py): the type go-yaml gives it
    value = plain_value(plain)
    types = {"bool": bool, "null": type(None), "int": int, "float": float, "str": str}
    want = str if plain.lower().endswith("nan") else types[kind]  # (NaN equals nothing)
    assert type(value) is want, (plain, value)


@pytest.mark.parametrize(
    ("plain", "value"),
    [
        ("0644", 420),
        ("0600", 384),
        ("420", 420),
        ("-017", -15),
        ("0x_1F", 31),
        ("1_000", 1000),
        ("-0b101", -5),
        ("0o17", 15),
        ("08", 8.0),
        ("+.5", 0.5),
        ("-.INF", float("-inf")),
    ],
)
def test_plain_values(plain: str, value: object) -> None:
    assert plain_value(plain) == value


def test_report_reads_a_mode_as_kubectl_does(tmp_path: Path) -> None:
    # defaultMode: 0644 is 420 for kubectl (go-yaml: leading-zero octal); the report read
    # it as 644 and listed 420 -> 0644 as a change that restarts the Deployment
    def side(mode: str) -> str:
        return (
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api}\nspec:\n"
            "  selector: {matchLabels: {app: api}}\n  template:\n"
            "    metadata: {labels: {app: api}}\n    spec:\n"
            "      containers: [{name: c, image: 'x:1'}]\n"
            f"      volumes: [{{name: v, secret: {{secretName: s{mode}}}}}]\n"
        )

    (tmp_path / "o.yaml").write_text(side(", defaultMode: 420"))
    for new, restarts in (("0644", 0), ("0o644", 0), ("0600", 1)):
        (tmp_path / "n.yaml").write_text(side(f", defaultMode: {new}"))
        res = run_cmhash(
            ["report", "--no-config", "--format", "json", "o.yaml", "n.yaml"], cwd=tmp_path
        )
        assert res.code == 0, res.stderr
        data = json.loads(res.out)
        assert data["summary"]["restart"] == restarts, (new, data["restart"])
    (cause,) = data["restart"][0]["causes"]
    assert '"defaultMode":384' in cause["new"]


@pytest.mark.parametrize("value", ["03:00", "16:9", "1:30"])
@pytest.mark.parametrize("field", ["data", "stringData"])
def test_clock_values_are_valid_config(value: str, field: str) -> None:
    kind = "ConfigMap" if field == "data" else "Secret"
    doc = f"apiVersion: v1\nkind: {kind}\nmetadata:\n  name: c\n{field}:\n  BACKUP_TIME: {value}\n"
    res = run_cmhash(["--no-config", "-"], stdin=doc.encode())
    assert res.code == 0, res.stderr
    assert res.out == doc


@pytest.mark.parametrize(
    ("spelling", "optional"),
    [
        ("yes", True),
        ("on", True),
        ("True", True),
        ("Y", True),
        ("no", False),
        ("off", False),
        ("FALSE", False),
        ("", False),
    ],
)
def test_optional_reads_go_yaml_booleans(spelling: str, optional: bool) -> None:
    """An optional reference to a missing ConfigMap is hashed as absent without a warning;
    a required one warns (missing-reference)."""
    doc = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n"
        "    spec:\n      containers:\n      - name: c\n        envFrom:\n"
        f"        - configMapRef: {{name: gone, optional: {spelling}}}\n"
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n"
    )
    res = run_cmhash(["--no-config", "--strict", "-"], stdin=doc.encode())
    assert res.code == (0 if optional else 2), res.stderr
    assert ("missing-reference" in res.stderr) is (not optional)


@pytest.mark.parametrize("spelling", ['"true"', "'yes'", "1", "maybe", "[true]"])
def test_optional_that_kubernetes_refuses(spelling: str) -> None:
    doc = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n"
        "    spec:\n      containers:\n      - name: c\n        envFrom:\n"
        f"        - configMapRef: {{name: gone, optional: {spelling}}}\n"
    )
    res = run_cmhash(["--no-config", "-"], stdin=doc.encode())
    assert res.code == 2 and res.stdout == b""
    assert "configMapRef.optional' must be true or false" in res.stderr
    assert res.stderr.startswith("cmhash: <stdin>:11:")


@pytest.mark.parametrize(("spelling", "paused"), [("yes", True), ("On", True), ("no", False)])
def test_paused_reads_go_yaml_booleans(spelling: str, paused: bool) -> None:
    doc = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n"
        f"  paused: {spelling}\n  template:\n"
        "    spec:\n      containers:\n      - name: c\n        envFrom:\n"
        "        - configMapRef: {name: cfg}\n"
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata: {a: b}\n"
    )
    res = run_cmhash(["--no-config", "-"], stdin=doc.encode())
    assert res.code == 0
    assert ("is paused" in res.stderr) is paused
