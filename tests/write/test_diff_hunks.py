"""``--diff`` builds its hunks from cmhash's edits (write/diff.py) in linear time, and
they are difflib's: every diff the CLI writes here (the corpus, the goldens, generated
streams, stale values replaced) is compared with difflib's unified diff of the same two
texts, both with the default trust and with the runs trusted from one line up (the
edit-built path as far as it goes)."""

from __future__ import annotations

import difflib
import functools
import random
import re
import shlex
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS, SHARED_CORPUS, TESTS, run_cmhash, shared_params
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from manifests import Stream, Style, render, streams, styles

from cmhash.write import diff as diff_module
from cmhash.write.diff import Replacement

CASES = TESTS / "cases"
HEX = re.compile(r"[0-9a-f]{64}")


# cmhash matches lines as SequenceMatcher(autojunk=False) does (write/diff.py);
# difflib.unified_diff builds its matcher with the default autojunk=True, which, on 200
# lines or more, treats a line standing in over 1 % of them (`---`, blank lines) as junk.
MATCHER = functools.partial(difflib.SequenceMatcher, autojunk=False)
HUNK = re.compile(r"^@@ -(\d+)")


def _unified(a: list[str], b: list[str], path: str, context: int) -> list[list[str]]:
    """difflib.unified_diff's hunks, each a list of lines, its @@ header first."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(difflib, "SequenceMatcher", MATCHER)
        lines = list(difflib.unified_diff(a, b, f"a/{path}", f"b/{path}", n=context))
    hunks: list[list[str]] = []
    for line in lines[2:]:  # after the --- / +++ labels
        if line.startswith("@@ "):
            hunks.append([])
        hunks[-1].append(line)
    return hunks


def _first(hunk: list[str]) -> int:
    """The first old line its @@ header names (1-based)."""
    match = HUNK.match(hunk[0])
    assert match, hunk[0]
    return int(match.group(1))


def _numbered(hunk: list[str]) -> Iterator[tuple[str, int]]:
    """A hunk's lines of the old side (context, removed) with their 1-based numbers."""
    number = _first(hunk)
    for line in hunk[1:]:
        if line[0] in " -":
            yield line[0], number
            number += 1


def difflib_diff(
    old: str, new: str, path: str, hidden: Iterable[int] = ()
) -> tuple[str, list[int]]:
    """``--diff``'s reference: Python's own ``difflib.unified_diff`` of the two texts'
    lines (``str.splitlines``), labelled a/ b/, with git's ``\\ No newline at end of
    file`` after a line that has no line break. ``hidden``: 1-based lines of ``old``
    holding Secret data; when one would show as context the diff has none, and a hunk
    that removes one is left out, its first line returned (the withheld list). Not
    built from cmhash's diff code, which it checks."""
    hidden = set(hidden)
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    context = 3
    if hidden and any(
        mark == " " and number in hidden
        for hunk in _unified(a, b, path, 3)
        for mark, number in _numbered(hunk)
    ):
        context = 0
    out: list[str] = []
    withheld: list[int] = []
    for hunk in _unified(a, b, path, context):
        if any(mark == "-" and number in hidden for mark, number in _numbered(hunk)):
            withheld.append(_first(hunk))
            continue
        if not out:
            out += [f"--- a/{path}\n", f"+++ b/{path}\n"]
        out += [
            line if line.endswith("\n") else f"{line}\n\\ No newline at end of file\n"
            for line in hunk
        ]
    return "".join(out), withheld


def applied(old: str, edits: Iterable[Replacement]) -> str:
    out, pos = [], 0
    for e in edits:
        out += [old[pos : e.start], e.text]
        pos = e.end
    return "".join([*out, old[pos:]])


def hidden_lines(old: str, secrets: Iterable[tuple[int, int]]) -> set[int]:
    """1-based lines (as difflib counts them) from a Secret's start to its end offset."""
    ends, pos = [], 0
    for line in old.splitlines(keepends=True):
        pos += len(line)
        ends.append(pos)
    from bisect import bisect_right

    out: set[int] = set()
    for start, end in secrets:
        out.update(range(bisect_right(ends, start) + 1, bisect_right(ends, end) + 2))
    return out


def assert_like_difflib(
    old: str, edits: list[Replacement], secrets: Iterable[tuple[int, int]] = ()
) -> diff_module.Diff:
    """With the default trust (text built to repeat short stretches can make a run of a
    line or two lose to a coincidental block: there difflib decides)."""
    secrets = list(secrets)
    want = difflib_diff(old, applied(old, edits), "f", hidden_lines(old, secrets))
    got = diff_module.unified_diff(old, edits, "f", secrets)
    assert (got.text, got.withheld) == want
    return got


@contextmanager
def checking() -> Iterator[list[int]]:
    """Every diff the CLI builds inside is also held to difflib's; the list counts them
    (a test that compared nothing proves nothing)."""
    real = diff_module.unified_diff
    seen: list[int] = []

    def checked(old: str, edits: Any, path: str, secrets: Any = (), **kw: Any) -> Any:
        secrets = list(secrets)
        got = real(old, edits, path, secrets, **kw)
        want = difflib_diff(old, applied(old, edits), path, hidden_lines(old, secrets))
        assert (got.text, got.withheld) == want, path
        trusting = real(old, edits, path, secrets, trust=1)
        assert (trusting.text, trusting.withheld) == want, path
        seen.append(1)
        return got

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(diff_module, "unified_diff", checked)
        yield seen


@pytest.fixture
def compared() -> Iterator[list[int]]:
    with checking() as seen:
        yield seen


def _diffs(data: bytes, args: list[str], cwd: Path | None = None) -> bytes:
    """Run ``--diff`` on ``data`` (stdin); the stream output, for a second round."""
    res = run_cmhash(["--no-config", "-q", "--diff", *args, "-"], stdin=data, cwd=cwd)
    assert res.code in (0, 2), res.stderr
    out = run_cmhash(["--no-config", "-q", *args, "-"], stdin=data, cwd=cwd)
    return out.stdout if out.code == 0 else b""


def _stale(output: bytes, seed: str) -> bytes:
    """cmhash's output with about half its values replaced by another: a re-run then
    replaces values instead of inserting lines."""
    rnd = random.Random(seed)
    return HEX.sub(
        lambda m: "1" * 64 if rnd.random() < 0.5 else m.group(0), output.decode()
    ).encode()


def _corpus() -> list[Any]:
    files = [
        pytest.param(p, id=p.relative_to(CORPUS).as_posix()) for p in sorted(CORPUS.rglob("*.yaml"))
    ]
    for p in sorted(SHARED_CORPUS.rglob("*.yaml")) if SHARED_CORPUS.is_dir() else []:
        files += shared_params(p, f"shared/{p.relative_to(SHARED_CORPUS).as_posix()}")
    return files


OPTION_SETS = {"default": [], "jobs-pods-ns": ["--jobs", "--pods", "-n", "default"]}


@pytest.mark.parametrize("options", sorted(OPTION_SETS))
@pytest.mark.parametrize("path", _corpus())
def test_corpus_diffs_are_difflibs(path: Path, options: str, compared: list[int]) -> None:
    args = OPTION_SETS[options]
    out = _diffs(path.read_bytes(), args)
    if out and HEX.search(out.decode()):
        _diffs(_stale(out, str(path)), args)


def test_the_corpus_has_diffs_to_compare(compared: list[int]) -> None:
    for p in sorted(CORPUS.rglob("*.yaml")):
        _diffs(p.read_bytes(), [])
    assert len(compared) >= 10


@pytest.mark.parametrize(
    "name", sorted(p.name for p in CASES.iterdir() if (p / "expected.yaml").exists())
)
def test_golden_diffs_are_difflibs(name: str, compared: list[int], tmp_path: Path) -> None:
    case = CASES / name
    args = shlex.split((case / "args.txt").read_text()) if (case / "args.txt").exists() else []
    config = ["--no-config"]
    if (case / "config.yaml").exists():
        (tmp_path / "config.yaml").write_bytes((case / "config.yaml").read_bytes())
        config = ["--config", "config.yaml"]
    data = (case / "input.yaml").read_bytes()
    res = run_cmhash([*config, "--diff", *args, "-"], stdin=data, cwd=tmp_path)
    assert res.code == 0, res.stderr
    assert compared, "no diff was built"


common = settings(
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large], deadline=None
)


@common
@given(streams(), styles)
def test_generated_stream_diffs_are_difflibs(stream: Stream, style: Style) -> None:
    with checking():
        data = render(stream, style)
        out = _diffs(data, ["--jobs", "--pods"])
        if out and HEX.search(out.decode()):
            _diffs(_stale(out, data.decode()), ["--jobs", "--pods"])


LINES = ["a: 1\n", "b:\n", "  - x\n", "---\n", "\n", "c: d\n", "  e: f\n"]


def _random_case(rnd: random.Random) -> tuple[str, list[Replacement]]:
    """Text of lines that repeat (YAML's `---`, blank lines, list items), CRLF or not,
    maybe without its final line break; then up to four edits anywhere, of text that
    may hold line breaks, a lone CR or nothing (a deletion)."""
    nl = rnd.choice(["\n", "\r\n"])
    old = "".join(rnd.choice(LINES).replace("\n", nl) for _ in range(rnd.randrange(0, 50)))
    if rnd.random() < 0.2:
        old = old.rstrip("\r\n")
    edits: list[Replacement] = []
    for at in sorted(rnd.sample(range(len(old) + 1), min(len(old) + 1, rnd.randrange(1, 5)))):
        if edits and at <= edits[-1].end:
            continue
        end = min(len(old), at + rnd.choice([0, 0, 1, 4, 12]))
        text = "".join(rnd.choice(["x", nl, "\n", "\r", "a: 1" + nl, "k: v"]) for _ in range(3))
        edits.append(Replacement(at, end, text[: rnd.randrange(0, 4) * 4]))
    return old, [e for e in edits if e.text or e.end > e.start]


@pytest.mark.parametrize("seed", range(400))
def test_random_edits_like_difflib(seed: int) -> None:
    old, edits = _random_case(random.Random(seed))
    if edits:
        assert_like_difflib(old, edits)


@common
@given(st.randoms(use_true_random=False))
def test_random_edits_like_difflib_property(rnd: random.Random) -> None:
    old, edits = _random_case(rnd)
    if edits:
        assert_like_difflib(old, edits)


@pytest.mark.parametrize(
    ("old", "edits"),
    [
        ("a: 1\nb: 2", [Replacement(9, 9, "\nc: 3")]),  # at the end, no final newline
        ("a: 1\nb: 2\n", [Replacement(9, 10, "")]),  # the final newline removed
        ("a: 1\nb: 2", [Replacement(9, 9, "\n")]),  # a final newline added
        ("a: 1\r\nb: 2\r\n", [Replacement(6, 6, "c: 3\r\n")]),  # CRLF
        ("a: 1\rb: 2\n", [Replacement(5, 5, "\nc: 3\n")]),  # "\n" joins a lone "\r"
        ("a: 1\r\nb: 2\n", [Replacement(5, 5, "x")]),  # inside a CRLF
        ("a\nb\n", [Replacement(0, 0, "a\n")]),  # a line like its neighbour: difflib slides it
        ("a\nb\nb\nb\nc\n", [Replacement(4, 4, "b\n"), Replacement(8, 8, "b\n")]),
        ("x\n" * 30, [Replacement(20, 20, "x\n")]),  # text that repeats itself
        # 200 lines or more, one between only `---`s changed: difflib's autojunk (off)
        ("a: 1\n" + "---\n" * 100 + "b: 2\n" + "---\n" * 100, [Replacement(408, 409, "3")]),
        ("", [Replacement(0, 0, "a: 1\n")]),
        ("a: 1\nb: 2\n", [Replacement(0, 4, "a: 2"), Replacement(8, 9, "3")]),  # two on...
        ("a: 1\nb: 2\n", [Replacement(3, 4, "2"), Replacement(4, 4, "\nc: 3")]),  # ...lines
    ],
)
def test_edge_cases_like_difflib(old: str, edits: list[Replacement]) -> None:
    assert_like_difflib(old, edits)


def test_secret_lines_hidden_in_the_diffs_own_line_count() -> None:
    """A lone CR ends a line for the diff (str.splitlines) and for YAML, not for the
    line numbers of messages: a Secret's lines are counted as the diff counts them, or
    its data would show as context (it did, before)."""
    doc = (
        "# one\r# two\r# three\r# four\r# five\r# six\n"
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\nstringData:\n"
        "  user: admin\n  token: hunter2\n---\nmetadata:\n  name: p\napiVersion: v1\n"
        "kind: Pod\nspec:\n  containers:\n  - name: c\n    envFrom:\n    - secretRef:\n"
        "        name: s\n"
    )
    res = run_cmhash(["--no-config", "--pods", "--diff", "-"], stdin=doc.encode())
    assert res.code == 0 and b"+    checksum/config" in res.stdout
    assert b"hunter2" not in res.stdout and b"admin" not in res.stdout
    assert b" ---" not in res.stdout  # no context at all: the Secret is near


def test_secret_span_hides_from_its_line_to_its_end_line() -> None:
    old = "s: 1\ns: 2\n---\nw: 1\n"
    got = assert_like_difflib(old, [Replacement(14, 14, "a: 1\n")], [(0, 10)])
    assert got.text == "--- a/f\n+++ b/f\n@@ -3,0 +4 @@\n+a: 1\n"  # line 3: hidden too
    got = assert_like_difflib(old, [Replacement(2, 3, "9")], [(0, 5)])
    assert got.text == "" and got.withheld == [1]


def test_a_big_stream_is_never_compared_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """The linear path: on 3,000 apps (42,000 lines, 3,000 edits), difflib's matcher
    only ever sees a few lines around an edit (it compared all 42,000 lines before,
    quadratic in them); and on 40 apps, the diff is still difflib's."""
    sizes: list[int] = []

    class Counted(difflib.SequenceMatcher):  # type: ignore[type-arg]
        def set_seqs(self, a: Any, b: Any) -> None:
            sizes.append(len(a) + len(b))
            super().set_seqs(a, b)

    def stream(apps: int) -> str:
        return "---\n".join(
            f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{i}\ndata:\n  k: v{i}\n"
            f"---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p{i}\nspec:\n"
            f"  containers:\n  - name: m\n    envFrom:\n    - configMapRef:\n"
            f"        name: c{i}\n"
            for i in range(apps)
        )

    with monkeypatch.context() as mp:
        mp.setattr(difflib, "SequenceMatcher", Counted)
        res = run_cmhash(["--no-config", "--pods", "--diff", "-"], stdin=stream(3000).encode())
    assert res.code == 0
    assert res.out.count("\n+    checksum/config: ") == 3000
    assert max(sizes, default=0) <= 50
    small = stream(40)
    with checking() as seen:
        run_cmhash(["--no-config", "--pods", "--diff", "-"], stdin=small.encode())
    assert seen


@pytest.mark.parametrize(
    ("broken", "fault"),
    [
        ("_range", lambda start, stop: f"{start},{stop - start}"),  # 0-based @@ ranges
        ("_line", lambda mark, text: mark + text),  # no "\ No newline at end of file"
    ],
)
def test_the_reference_catches_a_broken_diff(
    broken: str, fault: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reference is difflib's, not a copy of write/diff.py: a fault put into
    cmhash's hunk writing is caught (a copied reference would have changed with it)."""
    old, edits = "a\nb\nc", [Replacement(0, 1, "x")]
    assert_like_difflib(old, edits)
    monkeypatch.setattr(diff_module, broken, fault)
    with pytest.raises(AssertionError):
        assert_like_difflib(old, edits)


@pytest.mark.parametrize("walk", [".", "./dev", "dev/", ".//dev"])
def test_a_walk_of_dot_gives_paths_git_apply_takes(tmp_path: Path, walk: str) -> None:
    """``--diff .`` names ``dev/app.yaml``, not ``./dev/app.yaml`` (git apply refuses
    ``a/./dev/app.yaml``), and the patch applies with git apply to the same bytes as -i."""
    import subprocess

    from conftest import git_init

    repo = git_init(tmp_path / "repo")
    (repo / "dev").mkdir()
    (repo / "dev" / "app.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: b}\n---\n"
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n"
        "    spec:\n      containers:\n      - name: c\n"
        "        envFrom: [{configMapRef: {name: c}}]\n"
    )
    res = run_cmhash(["--no-config", "--diff", walk], cwd=repo)
    assert res.code == 0, res.stderr
    assert res.out.startswith("--- a/dev/app.yaml\n+++ b/dev/app.yaml\n"), res.out
    (tmp_path / "p.patch").write_text(res.out)
    subprocess.run(["git", "apply", str(tmp_path / "p.patch")], cwd=repo, check=True)
    after = (repo / "dev" / "app.yaml").read_bytes()
    assert run_cmhash(["--no-config", "--check", "dev"], cwd=repo).code == 0
    assert b"checksum/config" in after
