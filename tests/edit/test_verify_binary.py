"""A ``!!binary`` scalar in an edited workload: the tree keeps it decoded, as kubectl sends
it (parse/builder.py), and the self-check (edit/verify.py) reads the edited text's
event the same way, so the edit is verified instead of failing as a changed value (exit
3, "please report this bug"), on every parser path."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

CM = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app}\ndata: {a: '1'}\n---\n"
WORKLOAD = (
    "apiVersion: apps/v1\nkind: {kind}\nmetadata: {{name: web}}\nspec:\n  template:\n"
    "    metadata:\n      labels: {{a: {label}}}\n    spec:\n      containers:\n"
    "      - name: c\n        image: i\n        envFrom: [{{configMapRef: {{name: app}}}}]\n"
)
CASES = {
    "label": WORKLOAD.format(kind="Deployment", label="!!binary Yg=="),
    "kind": WORKLOAD.format(kind="!!binary RGVwbG95bWVudA==", label="b"),
}
# each parser path: (environment, arguments)
PATHS = {
    "c": ({}, []),
    "python": ({"CMHASH_CTREE": "0"}, []),
    "exact": ({}, ["--parser=exact"]),
}


@pytest.mark.parametrize("path", sorted(PATHS))
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_binary_scalar_in_an_edited_workload(tmp_path, case: str, path: str) -> None:
    f = tmp_path / "in.yaml"
    f.write_text(CM + CASES[case])
    extra, args = PATHS[path]
    res = subprocess.run(
        [sys.executable, "-m", "cmhash", *args, str(f)],
        capture_output=True,
        text=True,
        env={**os.environ, **extra},
    )
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines(keepends=True)
    at = lines.index("      annotations:\n")
    assert lines[at + 1].startswith("        checksum/config: ")
    assert "".join(lines[:at] + lines[at + 2 :]) == CM + CASES[case]  # nothing else changed


@pytest.mark.parametrize(
    "key",
    ["!!str checksum/config", "&a checksum/config", "!!binary Y2hlY2tzdW0vY29uZmln"],
)
def test_our_key_anchored_or_tagged_is_refused_at_the_key(tmp_path, key: str) -> None:
    """Our annotation key already there, anchored or tagged: one line at the key, exit 2
    (the value could be replaced, but the self-check reads our key plain: it had stopped
    the run with exit 3)."""
    f = tmp_path / "in.yaml"
    text = CM + CASES["label"].replace(
        "labels: {a: !!binary Yg==}", f"annotations:\n        {key}: old"
    )
    f.write_text(text)
    res = subprocess.run([sys.executable, "-m", "cmhash", str(f)], capture_output=True, text=True)
    assert res.returncode == 2, res.stderr
    line = text[: text.index(key)].count("\n") + 1
    assert (
        f"in.yaml:{line}:9: cannot replace the value of 'checksum/config': its key is" in res.stderr
    )
