"""The small things a user meets in the first hour, each through the CLI: where an
unclosed quote or bracket opens, an empty directory named, explain's own exit codes,
a namespace hint that fits the options given, a Secret value the API server would
refuse. (The terminal hint: test_empty_pipe.py; the progress bar: test_progress.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cmhash

HEAD = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"


@pytest.mark.parametrize("parser", ["fast", "exact"])
@pytest.mark.parametrize(
    ("body", "where", "what"),
    [
        ('data:\n  a: "abc\n  b: c\n  d: e\n', "6:6", "a quoted scalar"),
        ("data:\n  a: 'abc\n  b: c\n", "6:6", "a quoted scalar"),
        ("data: {a: b, c: [1, 2\n", "5:17", "a flow sequence"),
        ("data: {a: b\n\n\n", "5:7", "a flow mapping"),
    ],
)
def test_an_unclosed_construct_is_reported_where_it_opens(
    tmp_path: Path, parser: str, body: str, where: str, what: str
) -> None:
    f = tmp_path / "x.yaml"
    f.write_text(HEAD + body)
    res = run_cmhash(["--no-config", "--parser", parser, str(f)])
    assert res.code == 2 and res.stdout == b""
    assert res.stderr.startswith(
        f"cmhash: {f}:{where}: YAML syntax error: {what} that starts here is never closed ("
    )


@pytest.mark.parametrize("args", [[], ["--check"], ["-i"], ["explain"]])
def test_an_empty_directory_is_named(tmp_path: Path, args: list[str]) -> None:
    (tmp_path / "emptydir" / "sub").mkdir(parents=True)
    res = run_cmhash([*args, "--no-config", "emptydir"], cwd=tmp_path)
    assert res.code == 2
    assert res.stderr == (
        "cmhash: emptydir/: no *.yaml, *.yml or *.json file in this directory or below; "
        "name the rendered manifests\n"
    )


def test_explain_help_lists_explains_exit_codes() -> None:
    text = run_cmhash(["explain", "--help"]).stdout.decode()
    assert "0  explanation written" in text
    assert "changes needed" not in text and "--check" not in text.split("Exit codes:")[1]


NS = (
    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: a}\n---\n"
    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n"
    "    spec:\n      containers:\n      - name: c\n        envFrom:\n"
    "        - configMapRef: {name: c}\n"
)


@pytest.mark.parametrize("flag", ["-n", "--namespace"])
def test_the_namespace_hint_never_suggests_what_was_given(tmp_path: Path, flag: str) -> None:
    f = tmp_path / "x.yaml"
    f.write_text(NS)
    given = run_cmhash(["--no-config", flag, "b", str(f)])
    assert "[namespace-mismatch]" in given.stderr and "--namespace b" not in given.stderr
    assert "land in 'b' already, so make the namespaces agree in the manifests" in given.stderr
    bare = run_cmhash(["--no-config", str(f)])
    assert "pass --namespace a if they land in the same one" in bare.stderr


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ('"aGVs bG8="', False),  # a space: the API server's Go decoder refuses it
        ('"aGVs\\tbG8="', False),
        ("aGVs\n    bG8=", False),  # a plain scalar over two lines folds into a space
        ("|\n    aGVs\n    bG8=", True),  # line breaks are skipped, as Go's decoder does
        ('"aGVsbG8="', True),
    ],
)
def test_secret_data_is_base64_as_the_api_server_reads_it(
    tmp_path: Path, value: str, ok: bool
) -> None:
    f = tmp_path / "s.yaml"
    f.write_text(f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\ndata:\n  k: {value}\n")
    res = run_cmhash(["--no-config", str(f)])
    if ok:
        assert res.code == 0, res.stderr
    else:
        assert res.code == 2
        assert res.stderr == (
            f"cmhash: {f}:6:6: Secret data key 'k' is not valid base64 (it holds a space "
            "or tab; the API server allows only line breaks)\n"
        )
