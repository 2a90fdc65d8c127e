"""cmhash recognises its own checksum after another tool re-serialised it: kustomize
(kyaml) and yq write our double-quoted value as a plain scalar; any scalar style of the
same string is ours and current (no warning, nothing to change, ``--check`` 0). A plain
value that go-yaml reads as a number is not that string, and is rewritten."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import run_cmhash, tool, tool_env

CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: '1'\n"
DEP = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\nspec:\n  template:\n"
    "    metadata:\n      annotations:\n        checksum/config: {value}\n"
    "    spec:\n      containers:\n      - name: c\n        envFrom:\n"
    "        - configMapRef: {{name: cfg}}\n"
)


def ours(tmp_path: Path) -> str:
    f = tmp_path / "in.yaml"
    f.write_text(CM + "---\n" + DEP.format(value='"0"'))
    res = run_cmhash(["explain", "--no-config", "--format", "json", str(f)])
    import json

    return str(json.loads(res.stdout)["workloads"][0]["checksum"])


@pytest.mark.parametrize(
    "style", ["plain", "single", "double", "literal-strip", "folded-strip", "flow-map"]
)
def test_our_value_in_any_style_is_current(tmp_path: Path, style: str) -> None:
    value = ours(tmp_path)
    written = {
        "plain": value,
        "single": f"'{value}'",
        "double": f'"{value}"',
        "literal-strip": f"|-\n          {value}",
        "folded-strip": f">-\n          {value}",
    }.get(style)
    if style == "flow-map":
        text = (
            CM
            + "---\n"
            + DEP.format(value='"x"').replace(
                '      annotations:\n        checksum/config: "x"\n',
                f"      annotations: {{checksum/config: {value}}}\n",
            )
        )
    else:
        text = CM + "---\n" + DEP.format(value=written)
    f = tmp_path / "app.yaml"
    f.write_text(text)
    check = run_cmhash(["--no-config", "--check", str(f)])
    assert check.code == 0, check.stderr
    assert check.stderr == "nothing to change\n"  # no "a value cmhash did not write"
    out = run_cmhash(["--no-config", str(f)])
    assert out.code == 0 and out.stdout.decode() == text and out.stderr == ""


def test_a_plain_value_that_is_a_number_to_kubectl_is_rewritten(tmp_path: Path) -> None:
    """Not our string: ``1e5`` is a float to go-yaml; ``--check`` says it would change."""
    f = tmp_path / "app.yaml"
    f.write_text(CM + "---\n" + DEP.format(value="1e5"))
    check = run_cmhash(["--no-config", "--check", str(f)])
    assert check.code == 1
    assert "replaced-annotation" in check.stderr


def test_a_stale_value_of_ours_in_plain_style_is_updated_without_a_warning(tmp_path: Path) -> None:
    f = tmp_path / "app.yaml"
    f.write_text(CM + "---\n" + DEP.format(value="a" * 64))
    check = run_cmhash(["--no-config", "--check", str(f)])
    assert check.code == 1 and "replaced-annotation" not in check.stderr  # ours, stale


@pytest.mark.integration
def test_after_a_kustomize_round_trip_check_passes(tmp_path: Path) -> None:
    """cmhash's output through the real kustomize (v4.5.4: it drops the quotes), then
    cmhash again: nothing to change, no warning."""
    f = tmp_path / "app.yaml"
    f.write_text(CM + "---\n" + DEP.format(value='"stale"'))
    first = run_cmhash(["--no-config", str(f)])
    assert first.code == 0
    base = tmp_path / "base"
    base.mkdir()
    (base / "all.yaml").write_bytes(first.stdout)
    (base / "kustomization.yaml").write_text("resources:\n  - all.yaml\n")
    built = subprocess.run(
        [tool("kustomize4"), "build", str(base)],
        capture_output=True,
        text=True,
        env=tool_env(),
        check=True,
    ).stdout
    value = ours(tmp_path)
    assert f"checksum/config: {value}\n" in built  # re-serialised: the quotes are gone
    again = run_cmhash(["--no-config", "--check", "-"], stdin=built.encode())
    assert again.code == 0 and again.stderr == "nothing to change\n", again.stderr
