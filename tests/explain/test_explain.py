"""cmhash explain: text and JSON compared exactly with goldens, JSON validated by its
schema, Mermaid checked for shape; nothing is written and no Secret value shows."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from conftest import ROOT, run_cmhash
from hypothesis import given
from hypothesis import strategies as st

CASE = ROOT / "tests" / "fixtures" / "explain"


def explain(fmt: str) -> str:
    cwd = os.getcwd()
    os.chdir(CASE)  # file names in the output are as given: relative
    try:
        res = run_cmhash(["explain", "--no-config", "--format", fmt, "input.yaml"])
    finally:
        os.chdir(cwd)
    assert res.code == 0, res.stderr
    assert "s3cr3t" not in res.out
    return res.out


@pytest.mark.parametrize("fmt", ["text", "json", "mermaid"])
def test_golden(fmt: str, update_goldens: bool) -> None:
    out, expected = explain(fmt), CASE / f"expected.{fmt}"
    if update_goldens:
        expected.write_text(out)
    assert out == expected.read_text()


def test_json_follows_its_schema_and_tells_each_state() -> None:
    import jsonschema

    data = json.loads(explain("json"))
    schema = json.loads((ROOT / "src" / "cmhash" / "schemas" / "explain.schema.json").read_text())
    jsonschema.validate(data, schema)
    db, job = data["workloads"]
    assert db["status"] == "annotated" and len(db["checksum"]) == 64
    assert "OnDelete" in db["noRestart"]
    assert [r["target"] for r in db["references"]] == [
        "in-stream",
        "in-stream",
        "optional-absent",
        "missing",
    ]
    assert job["status"] == "skipped" and len(job["checksum"]) == 64  # what --jobs would write
    assert job["references"][0]["missingKeys"] == ["nope"]
    assert {c["name"]: c["keys"] for c in data["configs"]} == {
        "cfg": ["a", "b"],
        "creds": ["password"],
    }
    assert {f["code"] for f in data["findings"]} == {
        "no-restart",
        "missing-reference",
        "job-not-annotated",
        "missing-key",
    }


def test_value_equals_what_inject_writes() -> None:
    data = json.loads(explain("json"))
    res = run_cmhash(["--no-config", "-q", str(CASE / "input.yaml")])
    assert f'checksum/config: "{data["workloads"][0]["checksum"]}"'.encode() in res.stdout


def test_mermaid_shape() -> None:
    lines = explain("mermaid").splitlines()
    assert lines[0] == "graph LR"
    node = re.compile(r'^  \w+(\["[^"]+"\]|\[\("[^"]+"\)\]|>"[^"]+"\])$')
    edge = re.compile(r'^  \w+ (-->|-\.->)\|"[^"]+"\| \w+$')
    assert all(node.match(line) or edge.match(line) for line in lines[1:]), lines
    assert sum(1 for line in lines if edge.match(line)) == 5


def test_explain_writes_nothing(tmp_path: Path) -> None:
    f = tmp_path / "in.yaml"
    f.write_bytes((CASE / "input.yaml").read_bytes())
    before = f.read_bytes()
    assert run_cmhash(["explain", "--no-config", str(f)]).code == 0
    assert f.read_bytes() == before


def test_mermaid_labels_cannot_break_out() -> None:
    from cmhash.mermaid import explain_graph as to_mermaid

    data = {
        "workloads": [
            {
                "kind": "Deployment",
                "name": 'w"x',
                "namespace": "",
                "references": [
                    {
                        "kind": "ConfigMap",
                        "name": 'c"d',
                        "namespace": "",
                        "how": "env",
                        "keys": ['k"'],
                        "target": "in-stream",
                    }
                ],
            }
        ]
    }
    out = to_mermaid(data)
    assert out.count('"') % 2 == 0 and "w#quot;x" in out and "c#quot;d" in out


def _decode_id(node_id: str) -> list[str]:
    """The inverse of mermaid_id, reading left to right: ``__`` separates parts, ``_hex_``
    is one escaped character. That it exists proves mermaid_id is injective."""
    parts, cur, i = [], "", 0
    while i < len(node_id):
        if node_id.startswith("__", i):
            parts.append(cur)
            cur, i = "", i + 2
        elif node_id[i] == "_":
            end = node_id.index("_", i + 1)
            cur, i = cur + chr(int(node_id[i + 1 : end], 16)), end + 1
        else:
            assert node_id[i].isascii() and node_id[i].isalnum(), node_id
            cur, i = cur + node_id[i], i + 1
    return [*parts, cur]


COLLIDING = [
    ("ConfigMap", "shop", "app-config"),
    ("ConfigMap", "shop", "app.config"),
    ("ConfigMap", "shop", "app_config"),
    ("ConfigMap", "shop", "app_2d_config"),
    ("ConfigMap", "shop", "app__config"),
    ("ConfigMap", "a-b", "c"),
    ("ConfigMap", "a", "b-c"),
    ("ConfigMap", "a_b", "c"),
    ("ConfigMap", "a", "b_c"),
    ("ConfigMap", "", "a"),
    ("ConfigMap", "a", ""),
    ("ConfigMap", "", "a_"),
    ("ConfigMap_", "", "a"),
    ("ConfigMap", "", "é"),
    ("ConfigMap", "", "e\u0301"),
]


def test_mermaid_ids_are_unique_per_object() -> None:
    """Names that differ only by punctuation, and namespace/name splits that used to
    collapse into one id (app-config, app.config, app_config; ("a-b", "c"), ("a", "b-c")),
    get distinct ids made of [A-Za-z0-9_] only, and each id decodes back to its parts."""
    from cmhash.mermaid import mermaid_id

    ids = [mermaid_id("c", *parts) for parts in COLLIDING]
    assert len(set(ids)) == len(ids), ids
    for parts, node_id in zip(COLLIDING, ids, strict=True):
        assert re.fullmatch(r"[A-Za-z0-9_]+", node_id)
        assert _decode_id(node_id) == ["c", *parts]
    assert mermaid_id("c", "ConfigMap", "shop", "app-config") == "c__ConfigMap__shop__app_2d_config"
    assert mermaid_id("c", "ConfigMap", "x") != mermaid_id("w", "ConfigMap", "x")


@given(st.lists(st.text(max_size=6), min_size=1, max_size=4))
def test_mermaid_id_round_trips(parts: list[str]) -> None:
    from cmhash.mermaid import mermaid_id

    assert _decode_id(mermaid_id("w", *parts)) == ["w", *parts]


def test_explain_mermaid_keeps_punctuation_twins_apart() -> None:
    """Three ConfigMaps whose names differ only by punctuation, each used by its own
    Deployment: three config nodes, each with its one edge."""
    from cmhash.mermaid import explain_graph as to_mermaid
    from cmhash.mermaid import mermaid_id

    names = ["app-config", "app.config", "app_config"]
    data = {
        "workloads": [
            {
                "kind": "Deployment",
                "name": f"w{i}",
                "namespace": "shop",
                "references": [
                    {
                        "kind": "ConfigMap",
                        "name": n,
                        "namespace": "shop",
                        "how": "envFrom",
                        "keys": None,
                        "target": "in-stream",
                    }
                ],
            }
            for i, n in enumerate(names)
        ]
    }
    lines = to_mermaid(data).splitlines()
    nodes = [x.split("[")[0].strip() for x in lines if x.startswith("  c__") and "[(" in x]
    edges = [x.split() for x in lines if " -->" in x]
    assert len(set(nodes)) == 3
    assert sorted((e[0], e[-1]) for e in edges) == sorted(
        (mermaid_id("c", "ConfigMap", "shop", n), mermaid_id("w", "Deployment", "shop", f"w{i}"))
        for i, n in enumerate(names)
    )


def test_mermaid_labels_are_literal() -> None:
    """Entity codes, HTML and Markdown strings in names stay text (the real renderer
    shows them as named: tests/explain/test_mermaid.py)."""
    from cmhash.mermaid import mermaid_label

    assert mermaid_label('x#quot;y "<b>&amp;</b>" `md`\nz') == (
        "x#35;quot;y #quot;#lt;b#gt;#amp;amp;#lt;/b#gt;#quot; #96;md#96; z"
    )
    assert mermaid_label("semi;colon pi|pe [a]{b}(c) café") == "semi;colon pi|pe [a]{b}(c) café"


ARGO = ROOT / "tests" / "corpus" / "argo-cd" / "manifests" / "install.excerpt.yaml"


def test_one_line_per_referenced_object_by_default_every_reference_with_detail() -> None:
    """Argo CD's install: its controllers read some 40 optional keys of one ConfigMap,
    one env entry each. The default shows the workload on a screen (a line per object it
    references); --detail lists every reference; the JSON is the same either way."""
    base = ["explain", "--no-config", str(ARGO)]
    short, detail = run_cmhash(base).out, run_cmhash([*base, "--detail"]).out
    data = json.loads(run_cmhash([*base, "--format", "json"]).out)
    workloads = data["workloads"]
    refs = sum(len(w["references"]) for w in workloads)
    objects = sum(
        len({(r["kind"], r["namespace"], r["name"]) for r in w["references"]}) for w in workloads
    )
    heads = [line for line in detail.splitlines() if line and not line.startswith(" ")]
    assert len(detail.splitlines()) >= refs + len(workloads)  # one line per reference
    tree = short.split("\n\n")[0].splitlines()
    assert tree[-1] == "(one line per referenced object: --detail lists every reference)"
    assert len([line for line in tree if "─ " in line]) == objects  # one per object
    assert len(tree) <= 10 * len(workloads)  # about 7 a workload, not 40
    assert [line for line in short.splitlines() if line and not line.startswith(" ")] == (
        [*heads[: len(workloads)], tree[-1], *heads[len(workloads) :]]
    )
    line = next(x for x in tree if "argocd-cmd-params-cm via env, volume" in x)
    assert "references, " in line and "keys, optional): in-stream; " in line
    assert line.endswith(" optional keys absent")  # all optional: none is "missing"
    assert (
        run_cmhash([*base, "--format", "json", "--detail"]).out
        == run_cmhash([*base, "--format", "json"]).out
    )


MIXED = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg, namespace: s}
data: {a: "1", b: "2"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: s}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: web
          image: nginx
          env:
            - {name: A, valueFrom: {configMapKeyRef: {name: cfg, key: a}}}
            - {name: Z, valueFrom: {configMapKeyRef: {name: cfg, key: zz, optional: true}}}
            - {name: Y, valueFrom: {configMapKeyRef: {name: cfg, key: yy}}}
            - {name: P, valueFrom: {secretKeyRef: {name: sec, key: p, optional: true}}}
            - {name: Q, valueFrom: {secretKeyRef: {name: sec, key: q}}}
"""


def test_the_short_view_is_one_line_per_object_and_tells_required_from_optional(
    tmp_path: Path,
) -> None:
    """One Secret read by an optional and a required reference is one line, saying what
    the required one finds; a required missing key (the pod would not start) is told
    apart from an optional absent one."""
    app = tmp_path / "mix.yaml"
    app.write_text(MIXED)
    tree = [
        x for x in run_cmhash(["explain", "--no-config", str(app)]).out.splitlines() if "─ " in x
    ]
    assert tree == [
        "  ├─ ConfigMap/cfg via env (3 references, keys a, yy, zz, partly optional): "
        "in-stream; missing keys: yy; optional keys absent: zz",
        "  └─ Secret/sec via env (2 references, keys p, q, partly optional): missing "
        "(optional references: optional-absent)",
    ]


@pytest.mark.parametrize(
    ("optional", "said"), [(True, "optional keys absent"), (False, "missing keys")]
)
def test_one_reference_to_an_absent_key_is_said_as_several_are(
    tmp_path: Path, optional: bool, said: str
) -> None:
    """An optional reference's absent key is not missing (the pod starts without it): one
    reference is worded as the short view words several."""
    flag = ", optional: true" if optional else ""
    app = tmp_path / "one.yaml"
    app.write_text(
        MIXED.split("      containers:")[0]
        + "      containers:\n        - name: web\n          image: nginx\n          env:\n"
        + f"            - {{name: Z, valueFrom: {{configMapKeyRef: {{name: cfg, key: zz{flag}}}}}}}\n"
    )
    tree = [
        x for x in run_cmhash(["explain", "--no-config", str(app)]).out.splitlines() if "─ " in x
    ]
    extra = ", optional" if optional else ""
    assert tree == [f"  └─ ConfigMap/cfg via env (keys zz{extra}): in-stream; {said}: zz"]
