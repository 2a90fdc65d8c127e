"""Real manifests from ../shared/corpus: exit 0, only annotation lines added, the
output parses to the input plus our key, a second run is byte-identical, and the
fast path equals the exact (reference) path."""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import pytest
import yaml
from conftest import CORPUS, run_cmhash, strip_key

FILES = sorted(CORPUS.rglob("*.yaml")) if CORPUS.is_dir() else []
SMALL = [f for f in FILES if f.stat().st_size < 300_000]
ADDED = re.compile(r'^\s*(metadata:|annotations:|checksum/config: "[0-9a-f]{64}")\s*$')
REPLACED = re.compile(r"^\s*checksum/config: \S+\s*$")
KEY = "checksum/config"


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(CORPUS)))
def test_corpus_file(path: Path) -> None:
    data = path.read_bytes()
    res = run_cmhash(["--no-config", "-q", str(path)])
    assert res.code == 0, res.stderr
    old, new = data.decode().splitlines(), res.out.splitlines()
    for line in difflib.unified_diff(old, new, n=0, lineterm=""):
        if line.startswith(("---", "+++", "@@")):
            continue
        if line.startswith("-"):  # only a previous value of our own key may go
            assert REPLACED.match(line[1:]), f"removed line: {line}"
        else:
            assert ADDED.match(line[1:]), f"added line: {line}"
    before = list(yaml.load_all(data, Loader=yaml.CSafeLoader))
    after = list(yaml.load_all(res.stdout, Loader=yaml.CSafeLoader))
    assert [strip_key(d) for d in after] == [strip_key(d) for d in before]
    again = run_cmhash(["--no-config", "-q", "-"], stdin=res.stdout)
    assert again.stdout == res.stdout


@pytest.mark.parametrize("path", SMALL, ids=lambda p: str(p.relative_to(CORPUS)))
def test_fast_equals_exact(path: Path) -> None:
    fast = run_cmhash(["--no-config", "-q", "--parser", "fast", str(path)])
    exact = run_cmhash(["--no-config", "-q", "--parser", "exact", str(path)])
    assert (fast.code, fast.stdout) == (exact.code, exact.stdout)


@pytest.mark.slow
@pytest.mark.parametrize("path", [f for f in FILES if f not in SMALL],
                         ids=lambda p: str(p.relative_to(CORPUS)))
def test_fast_equals_exact_large(path: Path) -> None:
    test_fast_equals_exact(path)


def test_kube_prometheus_directory_resolves_across_files(corpus: Path) -> None:
    res = run_cmhash(["--no-config", "-q", str(corpus / "kube-prometheus" / "manifests")])
    assert res.code == 0
    # grafana mounts the dashboards ConfigMapList items and its datasources Secret
    assert res.out.count(f'{KEY}: "') >= 3


GENERATOR = CORPUS.parent / "bench" / "make_stream.py"


@pytest.mark.parametrize("apps,seed", [(30, 0), (30, 7), (120, 3)])
def test_fast_equals_exact_on_generated_streams(tmp_path: Path, apps: int, seed: int) -> None:
    """The benchmark's own input (every workload kind, CRDs, block scalars, flow maps):
    the fast path must write exactly what the reference path writes."""
    import subprocess
    import sys

    if not GENERATOR.is_file():
        pytest.skip("../shared/bench/make_stream.py is not present")
    stream = tmp_path / "stream.yaml"
    stream.write_bytes(subprocess.run(
        [sys.executable, str(GENERATOR), str(apps), "--seed", str(seed)],
        capture_output=True, check=True).stdout)
    fast = run_cmhash(["--no-config", "-q", "--parser", "fast", str(stream)])
    exact = run_cmhash(["--no-config", "-q", "--parser", "exact", str(stream)])
    assert fast.code == 0, fast.stderr
    assert fast.stdout.count(b"checksum/config:") >= apps
    assert (fast.code, fast.stdout) == (exact.code, exact.stdout)
    forked = run_cmhash(["--no-config", "-q", "--workers", "2", str(stream)])
    assert forked.stdout == fast.stdout
