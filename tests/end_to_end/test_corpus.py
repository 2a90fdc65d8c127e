"""Real manifests: the vendored subset in tests/corpus always, and every other file of
../shared/corpus when it is present (always in CI). Each exits 0, adds only annotation
lines, parses to the input plus our key, a second run is byte-identical, and the fast
path equals the exact (reference) path."""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import CORPUS, SHARED, SHARED_CORPUS, run_cmhash, shared_params, strip_key

KEY = "checksum/config"
ADDED = re.compile(r'^\s*(metadata:|annotations:|checksum/config: "[0-9a-f]{64}")\s*$')
REPLACED = re.compile(r"^\s*checksum/config: \S+\s*$")
LARGE = 300_000  # bytes; the fast/exact comparison of larger files is slow


def _vendored_copy(path: Path) -> bool:
    copy = CORPUS / path.relative_to(SHARED_CORPUS)
    return copy.is_file() and copy.read_bytes() == path.read_bytes()


def _cases() -> list[tuple[Path, Any]]:
    """(path, parameter): the vendored files (id: their path under tests/corpus), then the
    files of ../shared/corpus not vendored byte for byte (id: shared/<path>)."""
    out: list[tuple[Path, Any]] = [
        (p, pytest.param(p, id=p.relative_to(CORPUS).as_posix()))
        for p in sorted(CORPUS.rglob("*.yaml"))
    ]
    if SHARED_CORPUS.is_dir():
        for p in sorted(SHARED_CORPUS.rglob("*.yaml")):
            if not _vendored_copy(p):
                rel = p.relative_to(SHARED_CORPUS).as_posix()
                out += [(p, param) for param in shared_params(p, f"shared/{rel}")]
    else:  # in CI: one parameter, which fails (CI runs next to ../shared); locally: none
        out += [(SHARED_CORPUS, param) for param in shared_params(SHARED_CORPUS, "shared")]
    return out


CASES = _cases()


def _size(path: Path) -> int:
    return path.stat().st_size if path.is_file() else 0


FILES = [param for _, param in CASES]
SMALL = [param for path, param in CASES if _size(path) < LARGE]
BIG = [param for path, param in CASES if _size(path) >= LARGE]


@pytest.mark.parametrize("path", FILES)
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


@pytest.mark.parametrize("path", SMALL)
def test_fast_equals_exact(path: Path) -> None:
    fast = run_cmhash(["--no-config", "-q", "--parser", "fast", str(path)])
    exact = run_cmhash(["--no-config", "-q", "--parser", "exact", str(path)])
    assert (fast.code, fast.stdout) == (exact.code, exact.stdout)


@pytest.mark.slow
@pytest.mark.parametrize("path", BIG)
def test_fast_equals_exact_large(path: Path) -> None:
    test_fast_equals_exact(path)


KUBE_PROMETHEUS = "kube-prometheus/manifests"


@pytest.mark.parametrize(
    "manifests",
    [
        pytest.param(CORPUS / KUBE_PROMETHEUS, id="vendored"),
        *shared_params(SHARED_CORPUS / KUBE_PROMETHEUS, "shared"),
    ],
)
def test_kube_prometheus_directory_resolves_across_files(manifests: Path) -> None:
    """One file per object: the vendored subset (grafana, blackbox-exporter and
    prometheus-adapter with what they mount) and the whole directory."""
    res = run_cmhash(["--no-config", str(manifests)])
    assert res.code == 0, res.stderr
    # grafana mounts the 33 items of the dashboards ConfigMapList (another file) and its
    # datasources Secret: all found
    assert "[missing-reference]" not in res.stderr, res.stderr
    assert res.out.count(f'{KEY}: "') >= 3


GENERATOR = SHARED / "bench" / "make_stream.py"


def test_fast_equals_exact_on_the_vendored_corpus_as_one_stream() -> None:
    """Every vendored manifest in one run (every shape the corpus has, one index across
    files): fast, exact and two workers write exactly the same stream."""
    root = CORPUS
    fast = run_cmhash(["--no-config", "-q", "--parser", "fast", str(root)])
    exact = run_cmhash(["--no-config", "-q", "--parser", "exact", str(root)])
    assert fast.code == 0, fast.stderr
    assert fast.stdout.count(b"checksum/config:") >= 20
    assert (fast.code, fast.stdout) == (exact.code, exact.stdout)
    forked = run_cmhash(["--no-config", "-q", "--workers", "2", str(root)])
    assert forked.stdout == fast.stdout


@pytest.mark.shared("bench", "make_stream.py")
@pytest.mark.parametrize(("apps", "seed"), [(30, 0), (30, 7), (120, 3)])
def test_fast_equals_exact_on_generated_streams(tmp_path: Path, apps: int, seed: int) -> None:
    """The benchmark's own input (every workload kind, CRDs, block scalars, flow maps):
    the fast path must write exactly what the reference path writes."""
    import subprocess
    import sys

    stream = tmp_path / "stream.yaml"
    stream.write_bytes(
        subprocess.run(
            [sys.executable, str(GENERATOR), str(apps), "--seed", str(seed)],
            capture_output=True,
            check=True,
        ).stdout
    )
    fast = run_cmhash(["--no-config", "-q", "--parser", "fast", str(stream)])
    exact = run_cmhash(["--no-config", "-q", "--parser", "exact", str(stream)])
    assert fast.code == 0, fast.stderr
    assert fast.stdout.count(b"checksum/config:") >= apps
    assert (fast.code, fast.stdout) == (exact.code, exact.stdout)
    forked = run_cmhash(["--no-config", "-q", "--workers", "2", str(stream)])
    assert forked.stdout == fast.stdout


# ------------------------------------------------------------ the vendored files

BUDGET = 2_000_000  # bytes, for everything under tests/corpus
ROW = re.compile(r"^\| `([^`]+\.yaml)` \|(?:[^|]*\|){4} (\d+) \| `([0-9a-f]{40})` \|", re.MULTILINE)


def _git_blob(data: bytes) -> str:
    import hashlib

    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def test_vendored_corpus_is_attributed_and_unchanged() -> None:
    """tests/corpus/SOURCES.md lists exactly the vendored files, with the size and git
    blob id of their bytes (an editor's final newline or a CRLF conversion fails here);
    each source directory has its license; the whole stays within budget."""
    rows = {
        rel: (int(size), blob)
        for rel, size, blob in ROW.findall((CORPUS / "SOURCES.md").read_text(encoding="utf-8"))
    }
    files = {p.relative_to(CORPUS).as_posix(): p for p in CORPUS.rglob("*.yaml")}
    assert len(files) >= 20
    assert sorted(rows) == sorted(files)
    for rel, path in files.items():
        data = path.read_bytes()
        assert (len(data), _git_blob(data)) == rows[rel], rel
        source = CORPUS / rel.split("/")[0]
        assert [*source.glob("LICENSE*")], f"no license next to {rel}"
    assert sum(p.stat().st_size for p in CORPUS.rglob("*") if p.is_file()) <= BUDGET


EXCERPT = "argo-cd/manifests/install.excerpt.yaml"
ARGOCD_INSTALL = "argo-cd/manifests/install.yaml"


def _source(rel: str) -> Path:
    return SHARED_CORPUS / (ARGOCD_INSTALL if rel == EXCERPT else rel)


VENDORED = sorted(p.relative_to(CORPUS).as_posix() for p in CORPUS.rglob("*.yaml"))
VERBATIM = [
    param
    for rel in VENDORED
    for param in shared_params(_source(rel), rel, CORPUS / rel, _source(rel))
]

if VERBATIM:  # defined only next to ../shared and in CI: an empty parametrize would skip

    @pytest.mark.parametrize(("vendored", "source"), VERBATIM)
    def test_vendored_file_is_verbatim_from_shared(vendored: Path, source: Path) -> None:
        """Next to ../shared (always in CI): each vendored file is its corpus file byte for
        byte; the excerpt is the end of argo-cd's install.yaml from a document start on, and
        leaves out only CustomResourceDefinitions."""
        excerpt, whole = vendored.read_bytes(), source.read_bytes()
        if vendored.name != Path(EXCERPT).name:
            assert excerpt == whole
            return
        assert excerpt.startswith(b"---\n") and whole.endswith(excerpt)
        left_out = whole[: -len(excerpt)]
        kinds = re.findall(rb"^kind: (\S+)$", left_out, re.MULTILINE)
        assert kinds == [b"CustomResourceDefinition"] * 3
