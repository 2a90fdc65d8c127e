"""cmhash report --versioned: "Versions deleted when NEW is applied" (``pruned``) is the
same list whether OLD and NEW are raw renders (as ``ci-report --render ... --versioned``
compares them) or cmhash's versioned outputs (the last deployed output against the merge
request's render): each side's objects are taken under the names they are applied with.
Three renders of one application: an ExternalSecret, a namespace-wide SealedSecret, a
ConfigMap and the Deployment that uses the three; v1 changes all three sources, v2 only
the ConfigMap."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, run_cmhash

CASE = ROOT / "tests" / "fixtures" / "report-pruned"


@pytest.fixture(scope="module")
def renders(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """v0..v2 as rendered, and v0-out..v2-out as ``cmhash --versioned`` writes them."""
    where = tmp_path_factory.mktemp("pruned")
    for v in ("v0", "v1", "v2"):
        (where / f"{v}.yaml").write_text((CASE / f"{v}.yaml").read_text())
        res = run_cmhash(["--no-config", "--versioned", f"{v}.yaml"], cwd=where)
        assert res.code == 0, res.stderr
        (where / f"{v}-out.yaml").write_text(res.out)
    return where


def _pruned(where: Path, old: str, new: str) -> list[tuple[str, str]]:
    res = run_cmhash(
        ["report", "--no-config", "--versioned", "--format", "json", old, new], cwd=where
    )
    assert res.code == 0, res.stderr
    data: dict[str, Any] = json.loads(res.out)
    return [(p["kind"], p["name"]) for p in data["pruned"]]


SIDES = [("", ""), ("-out", ""), ("", "-out"), ("-out", "-out")]


@pytest.mark.parametrize(("o", "n"), SIDES, ids=["raw-raw", "out-raw", "raw-out", "out-out"])
def test_the_versions_deleted_whatever_each_side_is(renders: Path, o: str, n: str) -> None:
    # only the ConfigMap changed: its OLD version goes, the sources' versions stay
    assert _pruned(renders, f"v0{o}.yaml", f"v2{n}.yaml") == [("ConfigMap", "app-hkttd54t4d")]
    # nothing changed: nothing goes
    assert _pruned(renders, f"v0{o}.yaml", f"v0{n}.yaml") == []
    # every source changed: each goes under the name it was applied with, a produced
    # Secret by its source (a SealedSecret named as its Secret: the hash is not shown)
    assert _pruned(renders, f"v0{o}.yaml", f"v1{n}.yaml") == [
        ("ConfigMap", "app-hkttd54t4d"),
        ("SealedSecret", "api-key-…"),
        ("ExternalSecret", "db-6d5hchh7d4"),
    ]
