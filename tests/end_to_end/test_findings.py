"""Every finding code is produced by a golden case (checked exactly there), and the
codes are documented in the README."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import ROOT, run_cmhash

from cmhash.findings import CODES
from cmhash.model import Level

GOLDENS = [
    *(ROOT / "tests" / "cases").glob("*/stderr.txt"),
    ROOT / "tests" / "fixtures" / "report" / "expected.txt",
    ROOT / "tests" / "fixtures" / "report-capacity" / "expected.txt",
    ROOT / "tests" / "fixtures" / "report-truth" / "expected-empty-old.txt",
]


def test_every_code_has_a_golden() -> None:
    seen = set()
    for path in GOLDENS:
        seen |= set(re.findall(r"\[([a-z-]+)\](?: \(new\))?$", path.read_text(), re.MULTILINE))
    assert set(CODES) <= seen, sorted(set(CODES) - seen)


def test_codes_are_documented() -> None:
    """The findings reference is generated from CODES (scripts/docs_hooks.py, checked in
    tests/project/test_docs.py); every code's level is one the views order by."""
    for code, (level, _) in CODES.items():
        assert isinstance(level, Level), code


def test_subpath_mounts_in_real_manifests(corpus: Path) -> None:
    """Istio's Grafana addon mounts three files of its ConfigMap with subPath; the
    MySQL example's subPath mounts are of its PVC; its ConfigMap is mounted whole."""
    grafana = corpus / "istio" / "samples" / "addons" / "grafana.yaml"
    res = run_cmhash(["--no-config", str(grafana)])
    lines = [x for x in res.stderr.splitlines() if x.endswith("[subpath-mount]")]
    assert len(lines) == 3
    assert all(
        "Deployment/grafana -n istio-system mounts ConfigMap 'grafana'" in x
        and "the checksum annotation restarts the pods" in x
        for x in lines
    )
    mysql = (
        corpus
        / "k8s-website"
        / "content"
        / "en"
        / "examples"
        / "application"
        / "mysql"
        / "mysql-statefulset.yaml"
    )
    res = run_cmhash(["--no-config", str(mysql)])
    assert "subpath-mount" not in res.stderr
