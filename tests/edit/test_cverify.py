"""The C++ self-check (edit/cverify.py): it accepts exactly our annotation, sends
everything else to the Python verifier, and cmhash's output is the same with it, without
it, and without rapidyaml at all."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import ROOT, run_cmhash
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from manifests import Stream, Style, big_stream, render, streams, styles

from cmhash.edit import cverify
from cmhash.knowledge.kinds import DEFAULT_TABLE

ryml = pytest.importorskip("ryml")
DEPLOYMENT = DEFAULT_TABLE.lookup("apps/v1", "Deployment")
POD = DEFAULT_TABLE.lookup("v1", "Pod")
KEY = "checksum/config"
V = "a" * 64

BASE = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
spec:
  template:
{template}"""


def doc(template: str) -> str:
    return BASE.format(template=template)


CASES = [  # (original template, edited template): our annotation only
    (
        "    spec:\n      containers: []\n",
        f'    metadata:\n      annotations:\n        {KEY}: "{V}"\n    spec:\n      containers: []\n',
    ),
    (
        "    metadata:\n      labels: {a: b}\n    spec: {}\n",
        f'    metadata:\n      annotations:\n        {KEY}: "{V}"\n      labels: {{a: b}}\n'
        "    spec: {}\n",
    ),
    (
        "    metadata:\n      annotations:\n        x: y\n    spec: {}\n",
        f'    metadata:\n      annotations:\n        {KEY}: "{V}"\n        x: y\n    spec: {{}}\n',
    ),
    (  # an existing value replaced
        f'    metadata:\n      annotations:\n        {KEY}: "old"\n    spec: {{}}\n',
        f'    metadata:\n      annotations:\n        {KEY}: "{V}"\n    spec: {{}}\n',
    ),
    (  # flow style
        "    metadata: {labels: {a: b}}\n    spec: {}\n",
        f'    metadata: {{labels: {{a: b}}, "annotations": {{"{KEY}": "{V}"}}}}\n    spec: {{}}\n',
    ),
]


@pytest.mark.parametrize(("old", "new"), CASES)
def test_accepts_our_annotation(old: str, new: str) -> None:
    assert cverify.verify(doc(old), doc(new), DEPLOYMENT, KEY, V) is True


MUTATIONS = [  # of CASES[1]'s edited text: each must not pass
    ("labels: {a: b}", "labels: {a: c}"),  # another value
    ("labels: {a: b}", "labels: {a: 'b'}"),  # another style
    ("labels: {a: b}", "labels: {a: b, c: d}"),  # a new key
    ("labels: {a: b}", "labels: [a, b]"),  # another shape
    ("name: app", "name: app2"),  # outside the template
]


@pytest.mark.parametrize("mutation", MUTATIONS)
def test_anything_else_goes_to_python(mutation: tuple[str, str]) -> None:
    old, new = CASES[1]
    before, after = mutation
    edited = doc(new).replace(before, after, 1)
    assert edited != doc(new)
    assert cverify.verify(doc(old), edited, DEPLOYMENT, KEY, V) is None


def test_wrong_value_or_style_of_ours_goes_to_python() -> None:
    old, new = CASES[0]
    assert cverify.verify(doc(old), doc(new), DEPLOYMENT, KEY, "b" * 64) is None
    single = doc(new).replace(f'"{V}"', f"'{V}'")
    assert cverify.verify(doc(old), single, DEPLOYMENT, KEY, V) is None


def test_what_it_does_not_take() -> None:
    old, new = CASES[0]
    anchored = doc(old).replace("containers: []", "containers: &c []")
    assert cverify.verify(anchored, doc(new), DEPLOYMENT, KEY, V) is None
    null = doc("    metadata:\n    spec: {}\n")
    assert cverify.verify(null, doc(new), DEPLOYMENT, KEY, V) is None
    assert cverify.verify("a: [b", doc(new), DEPLOYMENT, KEY, V) is None  # no parse


def _both(data: bytes, *args: str) -> None:
    """Without the C tree builder (which has its own, faster check: treecheck.py), with
    rapidyaml's check on every input size and without it."""
    runs = [
        run_cmhash(
            ["--no-config", *args, "-"],
            stdin=data,
            env={"CMHASH_RAPIDYAML": flag, "CMHASH_CTREE": "0"},
        )
        for flag in ("1", "0")
    ]
    on, off = runs
    assert (on.code, on.stdout, on.stderr) == (off.code, off.stdout, off.stderr)


def test_corpus_is_the_same_with_and_without() -> None:
    files = sorted((ROOT / "tests" / "corpus").rglob("*.yaml"))
    assert len(files) > 30
    for f in files:
        _both(f.read_bytes(), "-q")


def test_goldens_are_the_same_with_and_without() -> None:
    for case in sorted((ROOT / "tests" / "cases").iterdir()):
        if (case / "input.yaml").exists() and not (case / "config.yaml").exists():
            args = (case / "args.txt").read_text().split() if (case / "args.txt").exists() else []
            _both((case / "input.yaml").read_bytes(), *args)


@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large], deadline=None)
@given(streams(), styles)
def test_generated_streams_are_the_same_with_and_without(stream: Stream, style: Style) -> None:
    _both(render(stream, style), "-q", "--jobs", "--pods")


def test_without_rapidyaml_a_note_under_verbose(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    big.write_bytes(big_stream(5000, "'" + "x" * 200 + "'"))
    env = {"CMHASH_RAPIDYAML": "0", "CMHASH_CTREE": "0"}
    res = run_cmhash(["--no-config", "-v", str(big)], env=env)
    assert res.code == 0
    assert "note: rapidyaml is not installed (or CMHASH_RAPIDYAML=0)" in res.stderr
    assert "rapidyaml" not in run_cmhash(["--no-config", "-v", str(big)]).stderr
    # with the C tree builder, rapidyaml is not needed: no note
    res = run_cmhash(["--no-config", "-v", str(big)], env={"CMHASH_RAPIDYAML": "0"})
    assert res.code == 0 and "rapidyaml" not in res.stderr


def test_rapidyaml_prints_nothing_of_its_own(tmp_path: Path) -> None:
    """rapidyaml refuses ``'b'#c`` (libyaml reads it) and writes its own message to file
    descriptor 2: silenced, the Python verifier decides, and the output is the same."""
    import subprocess
    import sys

    manifest = tmp_path / "app.yaml"
    manifest.write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  k: v\n---\n"
        + doc("    spec:\n      containers:\n      - name: c\n        image: 'img'#c\n")
        + "        envFrom:\n        - configMapRef: {name: cfg}\n"
    )
    runs = [
        subprocess.run(
            [sys.executable, "-m", "cmhash", "--no-config", str(manifest)],
            capture_output=True,
            env={"CMHASH_RAPIDYAML": flag, "CMHASH_CTREE": "0", "PATH": "/usr/bin:/bin"},
            check=False,
        )
        for flag in ("1", "0")
    ]
    assert runs[0].returncode == runs[1].returncode == 0
    assert runs[0].stdout == runs[1].stdout and b"checksum/config" in runs[0].stdout
    assert runs[0].stderr == runs[1].stderr == b""


# the anchor/alias/tag test as first written: an alternation tried at every character
_PROPERTY_AS_WRITTEN = __import__("re").compile(r"(?:^|[\s\[{,])[&*!][^\s,\[\]{}\"']")


@given(st.text(alphabet=" \n\t[]{},&*!\"'ab:#-", max_size=30))
def test_property_scan_finds_what_the_first_pattern_found(text: str) -> None:
    assert cverify._plain(text) is (_PROPERTY_AS_WRITTEN.search(text) is None)


@pytest.mark.parametrize(
    ("text", "plain"),
    [
        ("schedule: '*/5 * * * *'\n", True),
        ("a: &x 1\n", False),
        ("&x a: 1\n", False),
        ("a: [*x]\n", False),
        ("a: {b: !t 1}\n", False),
        ("a: b&c *d\n", False),
        ("a: b&c\n", True),
        ("a: x*\n", True),
    ],
)
def test_property_scan(text: str, plain: bool) -> None:
    assert cverify._plain(text) is plain


def test_deeper_than_rapidyamls_emitter_goes_to_python(capfd: pytest.CaptureFixture[str]) -> None:
    """rapidyaml's emitter stops at 64 levels (an ExceptionVisit, with its own lines on
    stderr); cmhash reads up to its own limit: the C++ path cannot tell, Python decides,
    and nothing of rapidyaml's reaches stderr."""
    deep = "[" * 70 + "]" * 70
    old = doc(f"    spec:\n      containers: []\n      x: {deep}\n")
    new = doc(
        f'    metadata:\n      annotations:\n        {KEY}: "{V}"\n'
        f"    spec:\n      containers: []\n      x: {deep}\n"
    )
    assert cverify.verify(old, new, DEPLOYMENT, KEY, V) is None
    assert capfd.readouterr().err == ""
