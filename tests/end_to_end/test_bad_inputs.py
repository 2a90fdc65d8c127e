"""The catalogue of malformed and hostile inputs. Every entry: exit 2 (never 3, never a
traceback), one line naming the place, nothing on stdout, no file modified, in bounded
time. Small entries run with both parsers."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import pytest
from conftest import run_cmhash

from cmhash.errors import InputError
from cmhash.read.manifests import is_manifest_text
from cmhash.read.source import decode

H = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n"
S = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n"
DEP = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n"
    "{meta}    spec:\n      containers:\n      - name: c\n        envFrom:\n"
    "        - configMapRef: {ref}\n"
)


def _bomb() -> str:
    levels = "".join(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]\n" for i in range(1, 10))
    return H + "l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + levels


def _merge_bomb() -> str:
    levels = "".join(
        f"  m{i}: &m{i} {{<<: [*m{i - 1}, *m{i - 1}], k{i}: v}}\n" for i in range(1, 40)
    )
    return H + "data:\n  m0: &m0 {a: b}\n" + levels


ESCAPE = (
    "YAML syntax error: found invalid Unicode character escape code (while parsing a quoted scalar)"
)


class Bad(NamedTuple):
    name: str
    text: str | bytes
    message: str  # must appear in the one error line
    where: str | None  # "line:col" after the file name, or None (file only)


CATALOGUE: list[Bad] = [
    # --- YAML syntax
    Bad("bad-indentation", H + "   extra: y\n", "mapping values are not allowed", "5:9"),
    Bad("tab-indentation", H.replace("  name", "\tname"), "YAML does not allow tabs", "4:1"),
    # where it opens, not where the input ends
    Bad("unclosed-double-quote", H + 'data:\n  a: "abc\n', "a quoted scalar that starts", "6:6"),
    Bad("unclosed-single-quote", H + "data:\n  a: 'abc\n", "a quoted scalar that starts", "6:6"),
    Bad("unclosed-bracket", H + "data: [a, b\n", "a flow sequence that starts here", "5:7"),
    Bad("unclosed-brace", H + "data: {a: b\n", "a flow mapping that starts here", "5:7"),
    Bad(
        "stray-colon",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a: b\n",
        "mapping values are not allowed",
        "4:10",
    ),
    Bad("bad-block-sequence", H + "data:\n  a: b\n - c\n", "YAML syntax error", None),
    Bad("unsupported-yaml-version", "%YAML 2.0\n---\n" + H, "incompatible YAML document", "1:1"),
    # ruamel (the reference parser, which reads what libyaml refuses) asserted on a minor
    # version other than 1 or 2: exit 3, an internal error, on both paths
    Bad("yaml-version-1.3", "%YAML 1.3\n---\n" + H, "incompatible YAML document", "1:1"),
    Bad(
        "yaml-version-1.0",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n...\n%YAML 1.0\n---\n" + H,
        "incompatible YAML document",
        "6:1",
    ),
    Bad("undefined-alias", H + "data:\n  a: *nope\n", "undefined alias '*nope'", "6:6"),
    Bad("control-character", H + 'data:\n  a: "x\x07y"\n', "control character U+0007", "6:8"),
    # an escape naming a UTF-16 surrogate is no character: libyaml refuses it, ruamel (the
    # exact parser) makes a lone surrogate of it, refused with libyaml's words and place
    Bad("lone-surrogate-escape", H + 'data:\n  a: "\\ud800"\n', ESCAPE, "6:9"),
    Bad("lone-surrogate-escape-inside", H + 'data:\n  a: "ab\\udc00cd"\n', ESCAPE, "6:11"),
    Bad("long-surrogate-escape", H + 'data:\n  a: "\\U0000DBFF"\n', ESCAPE, "6:9"),
    Bad("surrogate-pair-escapes", H + 'data:\n  a: "\\ud83d\\ude00"\n', ESCAPE, "6:9"),
    Bad("surrogate-escape-in-a-key", H + 'data:\n  "\\ud800": x\n', ESCAPE, "6:6"),
    # beyond U+10FFFF: no character either (ruamel's chr() raised: exit 3)
    Bad("escape-beyond-unicode", H + 'data:\n  a: "\\U00110000"\n', ESCAPE, "6:9"),
    Bad("escape-beyond-int32", H + 'data:\n  a: "ab\\UFFFFFFFF"\n', ESCAPE, "6:11"),
    Bad(
        "escape-beyond-unicode-in-an-annotation",
        H.replace("metadata:\n", 'metadata:\n  annotations: {a: "\\U00110000"}\n'),
        ESCAPE,
        "4:23",
    ),
    # --- keys and document shapes
    Bad("duplicate-top-level-key", H + "kind: Secret\n", "duplicate key 'kind'", "5:1"),
    Bad("duplicate-data-key", H + "data:\n  a: x\n  a: y\n", "duplicate key 'a'", "7:3"),
    Bad("sequence-document", "- a\n- b\n", "a Kubernetes manifest must be a mapping", "1:1"),
    Bad("scalar-document", "hello\n", "a Kubernetes manifest must be a mapping", "1:1"),
    Bad("missing-kind", "apiVersion: v1\nmetadata:\n  name: x\n", "document has no 'kind'", "1:1"),
    Bad(
        "kind-not-a-string",
        "apiVersion: v1\nkind: [a]\nmetadata:\n  name: x\n",
        "'kind' must be a string",
        "2:7",
    ),
    Bad(
        "missing-metadata",
        "apiVersion: v1\nkind: ConfigMap\ndata:\n  a: b\n",
        "ConfigMap has no metadata.name",
        "1:1",
    ),
    Bad(
        "missing-name",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels: {}\n",
        "ConfigMap has no metadata.name",
        "1:1",
    ),
    Bad(
        "metadata-not-a-mapping",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: foo\n",
        "'metadata' must be a mapping",
        "3:11",
    ),
    Bad(
        "name-not-a-string",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [x]\n",
        "'name' must be a string",
        "4:9",
    ),
    Bad(
        "list-item-not-a-mapping",
        "apiVersion: v1\nkind: List\nitems:\n- a\n",
        "a Kubernetes manifest must be a mapping",
        "4:3",
    ),
    Bad(
        "list-items-not-a-sequence",
        "apiVersion: v1\nkind: List\nitems: {a: b}\n",
        "'items' of a List must be a sequence",
        "3:8",
    ),
    Bad(
        "reference-name-not-a-string",
        DEP.format(meta="", ref="{name: [x]}"),
        "configMapRef.name' must be a string",
        "11:32",
    ),
    # --- ConfigMap and Secret content
    Bad("data-not-a-mapping", H + "data: [a]\n", "'data' must be a mapping of strings", "5:7"),
    Bad("data-integer", H + "data:\n  a: 1\n", "is not a string in Kubernetes' YAML", "6:6"),
    Bad("data-boolean", H + "data:\n  a: yes\n", "is not a string in Kubernetes' YAML", "6:6"),
    Bad("data-nested-mapping", H + "data:\n  a: {b: c}\n", "'data.a' must be a string", "6:6"),
    Bad("secret-invalid-base64", S + "data:\n  a: '!!!'\n", "is not valid base64", "6:6"),
    Bad("secret-data-integer", S + "data:\n  a: 5\n", "is not a string in Kubernetes' YAML", "6:6"),
    Bad(
        "binarydata-invalid-base64",
        H + "binaryData:\n  a: 'not base64!'\n",
        "is not valid base64",
        "6:6",
    ),
    Bad(
        "stringdata-sequence",
        S + "stringData:\n  a: [x]\n",
        "'stringData.a' must be a string",
        "6:6",
    ),
    # --- tags, aliases, size, depth
    Bad("unknown-tag-on-value", H + "data:\n  a: !vault abc\n", "unknown tag '!vault'", "6:6"),
    Bad("unknown-tag-on-document", "--- !custom\n" + H, "unknown tag '!custom'", "1:5"),
    Bad(
        "unknown-verbatim-tag",
        H + "data:\n  a: !<tag:example.com,2000:x> b\n",
        "unknown tag 'tag:example.com,2000:x'",
        "6:6",
    ),
    Bad("billion-laughs", _bomb(), "an alias bomb?", "11:5"),
    Bad("merge-key-bomb", _merge_bomb(), "an alias bomb?", None),
    Bad("recursive-alias", H + "data:\n  a: b\nx: &x [1, *x]\n", "recursive alias", None),
    Bad(
        "deep-flow-nesting",
        H + "data:\n  a: " + "[" * 10000 + "]" * 10000 + "\n",
        "nesting deeper than 1000 levels",
        "6:1004",
    ),
    Bad(
        "deep-block-nesting",
        H + "x:\n" + "".join(" " * (i + 1) + f"k{i}:\n" for i in range(3000)),
        "nesting deeper than 1000 levels",
        "1005:1001",
    ),
    Bad(
        "unsafe-edit-anchor",
        DEP.format(meta="    metadata:\n      annotations: &a {x: y}\n", ref="{name: cfg}")
        + "---\n"
        + H
        + "data: {a: b}\n",
        "annotations carries an anchor (&a)",
        "8:20",
    ),
    # --- encodings and bytes
    Bad(
        "invalid-utf8",
        H.encode() + b'data:\n  a: "\xff\xfe"\n',
        "invalid UTF-8; manifests must be UTF-8 text",
        "6:7",
    ),
    Bad(
        "utf16-le",
        "\ufeff".encode("utf-16-le") + H.encode("utf-16-le"),
        "UTF-16 input is not supported; convert the file to UTF-8",
        "1:1",
    ),
    Bad(
        "utf16-be",
        "\ufeff".encode("utf-16-be") + H.encode("utf-16-be"),
        "UTF-16 input is not supported; convert the file to UTF-8",
        "1:1",
    ),
    Bad(
        "utf32",
        "\ufeff".encode("utf-32-le") + H.encode("utf-32-le"),
        "input is not supported",
        "1:1",
    ),
    Bad("nul-byte", H.encode() + b'data:\n  a: "x\x00"\n', "NUL byte in input", "6:8"),
    # --- characters the parsers read differently (refused in documents cmhash reads)
    Bad("bom-mid-stream", H + "---\n\ufeff" + H, "character U+FEFF (a byte order mark)", "6:1"),
    Bad("nel-in-plain-scalar", H + "data:\n  a: x\x85y\n", "character U+0085 (NEL)", "6:7"),
    Bad("line-separator", H + "data:\n  a: x\u2028y\n", "character U+2028 (LS)", "6:7"),
    Bad("paragraph-separator", H + "data:\n  a: 'x\u2029y'\n", "character U+2029 (PS)", "6:8"),
    # --- Kubernetes' own YAML rules
    Bad(
        "optional-quoted",
        DEP.format(meta="", ref="{name: cfg, optional: 'true'}"),
        "configMapRef.optional' must be true or false",
        "11:47",
    ),
    Bad(
        "optional-number",
        DEP.format(meta="", ref="{name: cfg, optional: 1}"),
        "configMapRef.optional' must be true or false",
        "11:47",
    ),
    Bad(
        "paused-string",
        DEP.replace("spec:\n  template", 'spec:\n  paused: "yes"\n  template').format(
            meta="", ref="{name: cfg}"
        ),
        "'spec.paused' must be true or false",
        "6:11",
    ),
    Bad("immutable-string", H + "immutable: 'true'\n", "'immutable' must be true or false", "5:12"),
    Bad(
        "real-list-items-not-a-sequence",
        "apiVersion: v1\nkind: ConfigMapList\nitems: {a: b}\n",
        "'items' of a ConfigMapList must be a sequence",
        "3:8",
    ),
    # --- anchors and aliases around an edit
    Bad(
        "aliased-list-item",
        "apiVersion: v1\nkind: List\nitems:\n- &d\n"
        + "".join(
            "  " + line + "\n" for line in DEP.format(meta="", ref="{name: cfg}").splitlines()
        )
        + "- *d\n- "
        + H.replace("\n", "\n  ").rstrip()
        + "\n",
        "cannot add the annotation: it would land inside the anchored node &d",
        "16:3",
    ),
    Bad(
        "aliased-spec-shared",
        "apiVersion: v1\nkind: List\nitems:\n"
        + "- "
        + "".join(
            "  " + line + "\n" for line in DEP.format(meta="", ref="{name: cfg}").splitlines()
        ).replace("  spec:\n", "  spec: &s\n", 1)[2:]
        + "- {apiVersion: apps/v1, kind: Deployment, metadata: {name: e, annotations: "
        "{cmhash.io/skip: 'true'}}, spec: *s}\n- " + H.replace("\n", "\n  ").rstrip() + "\n",
        "it would land inside the anchored node &s",
        "15:109",
    ),
    # --- empty
    Bad("empty", "", "no Kubernetes objects in the input", None),
    Bad("only-comments", "# a comment\n# another\n", "no Kubernetes objects in the input", None),
    Bad("only-markers", "---\n---\n...\n", "no Kubernetes objects in the input", None),
]

NO_OBJECTS = {"empty", "only-comments", "only-markers"}
SLOW_FOR_EXACT = {"deep-flow-nesting", "deep-block-nesting", "billion-laughs"}


def _check(res, path: Path, bad: Bad) -> None:  # type: ignore[no-untyped-def]
    assert res.code == 2, (res.code, res.stderr)
    assert res.stdout == b""
    assert "Traceback" not in res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    prefix = f"cmhash: {path}:" + (f"{bad.where}: " if bad.where else "")
    assert lines[0].startswith(prefix), (lines[0], prefix)
    assert bad.message in lines[0], lines[0]


@pytest.mark.parametrize("parser", ["fast", "exact"])
@pytest.mark.parametrize("bad", CATALOGUE, ids=lambda b: b.name)
def test_bad_input(tmp_path: Path, bad: Bad, parser: str) -> None:
    if parser == "exact" and bad.name in SLOW_FOR_EXACT:
        pytest.skip("covered by the fast parser; the pure-Python one is slow at this size")
    path = tmp_path / "input.yaml"
    data = bad.text.encode() if isinstance(bad.text, str) else bad.text
    path.write_bytes(data)
    start = time.monotonic()
    res = run_cmhash(["--no-config", "--parser", parser, str(path)])
    assert time.monotonic() - start < 30
    _check(res, path, bad)
    assert path.read_bytes() == data
    # --in-place and --check fail the same way and touch nothing; a file that is not a
    # manifest at all (no apiVersion or kind) is skipped by them, as in a repository walk
    try:
        is_manifest = is_manifest_text(decode("x", data, max_bytes=1 << 30).text)
    except InputError:  # not even text: an error in every mode
        is_manifest = True
    for mode in ("-i", "--check"):
        res = run_cmhash(["--no-config", "--parser", parser, "-v", mode, str(path)])
        assert res.code == (2 if is_manifest else 0), res.stderr
        assert is_manifest or "not a Kubernetes manifest" in res.stderr
        assert path.read_bytes() == data
    # from stdin, the same message names <stdin>; a pipe without objects is a render
    # of nothing (passed through with a warning), an error only under --strict
    strict = ["--strict"] if bad.name in NO_OBJECTS else []
    if strict:
        res = run_cmhash(["--no-config", "--parser", parser, "-"], stdin=data)
        assert res.code == 0 and res.stdout == data and bad.message in res.stderr
    res = run_cmhash(["--no-config", "--parser", parser, *strict, "-"], stdin=data)
    assert res.code == 2 and res.stdout == b"" and bad.message in res.stderr


def test_catalogue_is_big_enough() -> None:
    assert len(CATALOGUE) + len(FILE_SYSTEM) >= 40
    assert len({b.name for b in CATALOGUE}) == len(CATALOGUE)


def test_50_mb_scalar_is_refused_quickly(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_bytes(H.encode() + b'data:\n  a: "' + b"x" * (50 * 1024 * 1024) + b'"\n')
    start = time.monotonic()
    res = run_cmhash(["--no-config", str(path)])
    assert time.monotonic() - start < 60
    _check(res, path, Bad("", "", "over the limit of 8388608", "6:6"))


def test_over_max_input_bytes(tmp_path: Path) -> None:
    path = tmp_path / "in.yaml"
    path.write_text(H + "data:\n  a: b\n")
    res = run_cmhash(["--no-config", "--max-input-bytes", "10", str(path)])
    _check(res, path, Bad("", "", "over the limit of 10 bytes", None))


# ----------------------------------------------------------------- the file system


def _unreadable(tmp: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    tree = tmp / "tree"
    tree.mkdir()
    (tree / "a.yaml").write_text(H)
    locked = tree / "b.yaml"
    locked.write_text(H.replace("cfg", "other"))
    locked.chmod(0)
    if os.geteuid() == 0:  # root reads anything: make the open fail as it would for a user
        import builtins

        real_open = builtins.open

        def guarded(file, *args, **kwargs):  # type: ignore[no-untyped-def]
            if str(file) == str(locked):
                raise PermissionError(13, "Permission denied", str(file))
            return real_open(file, *args, **kwargs)

        monkeypatch.setattr(builtins, "open", guarded)
    return tree


def _symlink_loop(tmp: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    tree = tmp / "tree"
    tree.mkdir()
    (tree / "a.yaml").symlink_to(tree / "b.yaml")
    (tree / "b.yaml").symlink_to(tree / "a.yaml")
    return tree


def _dangling_symlink(tmp: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    tree = tmp / "tree"
    tree.mkdir()
    (tree / "a.yaml").symlink_to(tmp / "gone.yaml")
    return tree


def _fifo(tmp: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    tree = tmp / "tree"
    tree.mkdir()
    (tree / "a.yaml").write_text(H)
    os.mkfifo(tree / "pipe.yaml")
    return tree


def _missing(tmp: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return tmp / "nope"


FILE_SYSTEM: list[tuple[str, Callable[[Path, pytest.MonkeyPatch], Path], str, str]] = [
    ("unreadable-file", _unreadable, "b.yaml", "cannot read file: Permission denied"),
    ("symlink-loop", _symlink_loop, "a.yaml", "Too many levels of symbolic links"),
    ("dangling-symlink", _dangling_symlink, "a.yaml", "No such file or directory"),
    ("fifo-in-tree", _fifo, "pipe.yaml", "not a regular file"),
    ("missing-path", _missing, "", "no such file or directory"),
]


@pytest.mark.parametrize("case", FILE_SYSTEM, ids=lambda c: c[0])
def test_file_system_trouble(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: tuple[str, Callable[..., Path], str, str]
) -> None:
    _, make, culprit, message = case
    root = make(tmp_path, monkeypatch)
    before = {
        p: p.read_bytes()
        for p in tmp_path.rglob("*")
        if p.is_file() and not p.is_symlink() and os.access(p, os.R_OK) and not p.is_fifo()
    }
    res = run_cmhash(["--no-config", "-i", str(root)])
    assert res.code == 2 and res.stdout == b"", res.stderr
    line = res.stderr.strip()
    assert len(line.splitlines()) == 1 and message in line, line
    assert f"{root}/{culprit}" in line if culprit else str(root) in line
    assert {p: p.read_bytes() for p in before} == before


@pytest.mark.parametrize("name", ["billion-laughs", "merge-key-bomb", "deep-flow-nesting"])
def test_hostile_input_memory_is_bounded(tmp_path: Path, name: str) -> None:
    """In a fresh process: the peak RSS stays far below what expanding would take."""
    import subprocess
    import sys

    bad = next(b for b in CATALOGUE if b.name == name)
    path = tmp_path / "input.yaml"
    path.write_text(str(bad.text))
    code = (
        "import resource, subprocess, sys\n"
        "p = subprocess.run([sys.executable, '-m', 'cmhash', '--no-config', sys.argv[1]],"
        " capture_output=True)\n"
        "print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(path)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.split()
    assert out[0] == "2"
    assert int(out[1]) < 150 * 1024  # KiB: a real expansion would need gigabytes


def test_stdin_over_the_limit_stops_reading_at_the_limit() -> None:
    """1 GB piped in with a limit of 1000 bytes: refused after reading little more than
    the limit (the writer is cut off), in bounded memory."""
    import subprocess
    import sys

    code = (
        "import resource, subprocess, sys\n"
        "p = subprocess.Popen([sys.executable, '-m', 'cmhash', '--no-config',"
        " '--max-input-bytes', '1000'], stdin=subprocess.PIPE, stdout=subprocess.PIPE,"
        " stderr=subprocess.PIPE)\n"
        "chunk = b'# filler comment line\\n' * 50000\n"
        "sent = 0\n"
        "try:\n"
        "    while sent < 1 << 30:\n"
        "        p.stdin.write(chunk)\n"
        "        sent += len(chunk)\n"
        "except BrokenPipeError:\n"
        "    pass\n"
        "out, err = p.communicate()\n"
        "print(p.returncode, sent, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
        "print(err.decode().strip())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    ).stdout.splitlines()
    rc, sent, rss = out[0].split()
    assert rc == "2"
    assert int(sent) < 1 << 30  # it stopped reading: the writer got a broken pipe
    assert int(rss) < 100 * 1024  # KiB
    assert (
        out[1] == "cmhash: <stdin>: input is over the limit of 1000 bytes (raise it with "
        "--max-input-bytes)"
    )


# ----------------------------------------------------------------- fast and exact agree

# Documents both parsers pass through unread (their kind is certainly irrelevant): what
# they hold is kubectl's business, and neither parser may treat them differently.
PASSED_THROUGH = [
    (
        "bomb-in-a-service",
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n" + _bomb()[len(H) :] + "---\n" + H,
    ),
    (
        "deep-nesting-in-a-crd",
        "apiVersion: apiextensions.k8s.io/v1\n"
        "kind: CustomResourceDefinition\nmetadata:\n  name: x\nspec: "
        + "[" * 3000
        + "]" * 3000
        + "\n---\n"
        + H,
    ),
    (
        "syntax-error-in-a-service",
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\nspec: {a: b\n---\n" + H,
    ),
    (
        "nel-in-a-service",
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n  labels: {a: x\x85y}\n---\n" + H,
    ),
    (
        "custom-list-with-strings",
        "apiVersion: example.com/v1\nkind: IPAllowList\n"
        "metadata:\n  name: l\nitems:\n- 10.0.0.0/8\n---\n" + H,
    ),
]


@pytest.mark.parametrize(
    "text",
    [b.text for b in CATALOGUE if b.name not in SLOW_FOR_EXACT] + [t for _, t in PASSED_THROUGH],
    ids=[b.name for b in CATALOGUE if b.name not in SLOW_FOR_EXACT]
    + [n for n, _ in PASSED_THROUGH],
)
def test_fast_and_exact_agree(text: str | bytes) -> None:
    """Same exit code, stdout and stderr, whatever the input (the catalogue above, and
    hostile documents that both pass through)."""
    data = text.encode() if isinstance(text, str) else text
    fast = run_cmhash(["--no-config", "--parser", "fast", "-"], stdin=data)
    exact = run_cmhash(["--no-config", "--parser", "exact", "-"], stdin=data)
    assert (fast.code, fast.stdout) == (exact.code, exact.stdout), (fast.stderr, exact.stderr)
    assert fast.code in (0, 2)
    assert fast.stderr == exact.stderr  # the same place and the same words


# tabs between tokens on a line (YAML's s-separate-in-line; libyaml and Kubernetes' parser
# read them as spaces): not indentation, so no error for either parser
TABS_BETWEEN_TOKENS = (
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\t# the config\n  name: cfg\n"
    "data:\n  a:\tb\t# note\n  c: 'd\te'\n---\n"
    "apiVersion: apps/v1\nkind: Deployment\t# the app\nmetadata:\n  name: d\nspec:\n"
    "  template:\n    spec:\n      containers:\n      - name: c\n        image:\ti\n"
    "        envFrom:\n        - configMapRef: {name:\tcfg}\n"
)


@pytest.mark.parametrize("versioned", [[], ["--versioned"]], ids=["plain", "versioned"])
def test_tabs_between_tokens_read_alike(versioned: list[str]) -> None:
    data = TABS_BETWEEN_TOKENS.encode()
    fast = run_cmhash(["--no-config", *versioned, "--parser", "fast", "-"], stdin=data)
    exact = run_cmhash(["--no-config", *versioned, "--parser", "exact", "-"], stdin=data)
    assert fast.code == exact.code == 0, (fast.stderr, exact.stderr)
    assert fast.stdout == exact.stdout and b"checksum/config" in fast.stdout
    assert fast.stdout.count(b"\t") == data.count(b"\t")  # every tab as it was


# ------------------------------------------------------ standard streams closed or full

_CM = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"


def _closed(tmp_path: Path, args: list[str], *, out: str, err: str) -> tuple[int, str]:
    """cmhash run by a shell with stdout/stderr redirected as ``out``/``err`` say
    (``>&-``: closed when it starts; ``>/dev/full``: every write fails with ENOSPC);
    its exit code and what reached stderr (a file, unless stderr is closed)."""
    import shlex
    import subprocess

    from conftest import cmhash_command

    (tmp_path / "a.yaml").write_text(_CM)
    (tmp_path / "bad.yaml").write_text("a: [\n")
    line = " ".join(shlex.quote(a) for a in [*cmhash_command(), *args])
    done = subprocess.run(
        ["/bin/sh", "-c", f"exec {line} {out} {err}"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return done.returncode, done.stderr


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")
@pytest.mark.parametrize(
    "args",
    [
        ["a.yaml"],
        ["explain", "a.yaml"],
        ["report", "a.yaml", "a.yaml"],
        ["--help"],  # texts click writes itself
        ["--version"],
    ],
)
def test_an_output_that_cannot_be_written_is_one_line_and_exit_2(
    tmp_path: Path, args: list[str]
) -> None:
    code, err = _closed(tmp_path, args, out=">/dev/full", err="")
    assert (code, err) == (2, "cmhash: cannot write the output: No space left on device\n")


@pytest.mark.parametrize("args", [["--no-config", "a.yaml"], ["explain", "--no-config", "a.yaml"]])
def test_a_closed_stdout_is_one_line_and_exit_2(tmp_path: Path, args: list[str]) -> None:
    code, err = _closed(tmp_path, args, out=">&-", err="")
    assert (code, err) == (2, "cmhash: cannot write the output: standard output is closed\n")


@pytest.mark.parametrize(
    ("args", "out", "code"),
    [
        (["--no-config", "a.yaml"], "", 0),  # the output still goes to stdout
        (["--no-config", "bad.yaml"], "", 2),
        (["--no-config", "--check", "a.yaml"], "", 0),
        (["--bogus"], "", 2),
        (["--no-config", "a.yaml"], ">&-", 2),
        (["--no-config", "--check", "a.yaml"], ">&-", 0),  # nothing to write: its answer
        (["--help"], ">&-", 0),
    ],
)
def test_a_closed_stderr_keeps_the_exit_code(
    tmp_path: Path, args: list[str], out: str, code: int
) -> None:
    """No message can be shown, but the exit code is the run's (no traceback's 1)."""
    assert _closed(tmp_path, args, out=out or ">/dev/null", err="2>&-")[0] == code
