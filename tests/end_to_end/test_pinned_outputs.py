"""Byte-identical outputs, pinned: every vendored corpus file and a benchmark stream,
under several option sets and both parsers, give exactly the stdout, stderr and exit
code recorded in tests/fixtures/pinned-outputs.json (as SHA-256 digests). Refactors and
new parsers must not move a byte; a deliberate change is re-recorded with
``pytest --update-goldens`` and reviewed."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, SHARED, run_cmhash, shared_params

CORPUS = ROOT / "tests" / "corpus"
PINNED = ROOT / "tests" / "fixtures" / "pinned-outputs.json"
FILES = sorted(
    str(p.relative_to(CORPUS))
    for p in CORPUS.rglob("*")
    if p.suffix in (".yaml", ".yml", ".json") and p.is_file()
)
OPTIONS = {
    "default": [],
    "jobs-pods-ns": ["--jobs", "--pods", "-n", "default"],
    "exact": ["--parser", "exact"],
    "diff": ["--diff"],
    "check": ["--check"],
    "explain": ["explain", "--format", "json"],
}


def digest(code: int, out: bytes, err: str) -> str:
    h = hashlib.sha256()
    h.update(str(code).encode() + b"\0" + out + b"\0" + err.encode())
    return h.hexdigest()


def outcome(args: list[str], path: Path, cwd: Path) -> str:
    res = run_cmhash(["--no-config", *args, str(path.relative_to(cwd))], cwd=cwd)
    return digest(res.code, res.stdout, res.stderr)


def _pinned() -> dict[str, str]:
    return json.loads(PINNED.read_text()) if PINNED.exists() else {}


@pytest.mark.parametrize("option", sorted(OPTIONS))
@pytest.mark.parametrize("name", FILES)
def test_corpus_output_is_pinned(name: str, option: str, update_goldens: bool) -> None:
    args = OPTIONS[option]
    if args and args[0] == "explain":
        args = ["explain", "--no-config", *args[1:]]
        res = run_cmhash([*args, name], cwd=CORPUS)
        got = digest(res.code, res.stdout, res.stderr)
    else:
        got = outcome(args, CORPUS / name, CORPUS)
    key = f"{option}:{name}"
    pinned = _pinned()
    if update_goldens:
        pinned[key] = got
        PINNED.write_text(json.dumps(dict(sorted(pinned.items())), indent=1) + "\n")
    assert pinned.get(key) == got, key


BENCH = SHARED / "bench" / "make_stream.py"


@pytest.mark.parametrize("path", shared_params(BENCH, "make_stream-500"))
def test_benchmark_stream_output_is_pinned(
    tmp_path: Path, path: Path, update_goldens: bool
) -> None:
    stream = tmp_path / "stream.yaml"
    with stream.open("wb") as fh:
        subprocess.run([sys.executable, str(path), "500"], stdout=fh, check=True)
    pinned = _pinned()
    for option in ("default", "jobs-pods-ns"):
        got = outcome(OPTIONS[option], stream, tmp_path)
        key = f"{option}:bench/make_stream-500"
        if update_goldens:
            pinned[key] = got
            PINNED.write_text(json.dumps(dict(sorted(pinned.items())), indent=1) + "\n")
        assert pinned.get(key) == got, key
