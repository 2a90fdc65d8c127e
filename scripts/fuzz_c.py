"""A bounded differential fuzz of the C extensions against their Python references.

Mutated manifests (from the corpus: deleted, doubled and swapped lines and characters,
YAML's special tokens, odd characters and escapes) go through

* the entry points, in-process: ``_ctree.build`` against the Python tree builder
  (parse/builder.py over libyaml's events): the same tree node for node, or the C hands
  back (None) -- it must never accept what the Python path refuses; the fast path (libyaml,
  the C builder) against the exact one (ruamel): the same tree without offsets, or both
  refuse (parse/libyaml.py); and ``_cpack``'s
  pack/unpack of the analysis summaries against pickle's round trip;
* the CLI, in child processes: each batch of mutated documents as one stream, with the
  C (default), without it (``CMHASH_CTREE=0``) and with ``--parser exact``, inject with
  1 and 2 workers and explain: the same exit code, stdout and stderr.

Each phase runs for the seconds given. Fixed seeds first, then a random one, printed:
``python scripts/fuzz_c.py --seed N`` replays a failure. Exit 1 on the first
difference, with the text that made it (written to --out)."""

from __future__ import annotations

import argparse
import copy
import os
import pickle
import random
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

TOKENS = [
    "&a ",
    "*a",
    "!!str ",
    "!!binary ",
    "!x ",
    "{",
    "}",
    "[",
    "]",
    "? ",
    "- ",
    ": ",
    ", ",
    "\t",
    "#",
    "---\n",
    "...\n",
    "|\n",
    ">-\n",
    "'",
    '"',
    "\\",
    '"\\ud800"',
    '"\\U0001F600"',
    '"\\x41\\n"',
    "<<: *a\n",
    "\u00a0",
    "\u00e9",
    "\U0001f600",
    "\x85",
    "\u2028",
    "\ufeff",
    "\x07",
    "~",
    "null",
    "yes",
    "0x1F",
    "1e3",
    ".inf",
    "%YAML 1.1\n",
    "%TAG ! tag:x,2000:\n",
    "  ",
    "\n",
    "\r\n",
    "a: &a {b: c}\n",
    "k: *a\n",
    "[[[[",
    "{{{{",
]


def corpus_texts() -> list[str]:
    roots = [ROOT / "tests" / "corpus", ROOT.parent / "shared" / "corpus", ROOT / "examples"]
    texts = []
    for root in roots:
        for f in sorted(root.rglob("*.yaml")) if root.is_dir() else []:
            text = f.read_text(encoding="utf-8", errors="replace")
            texts += [d for d in text.split("\n---\n") if d.strip()]
    return texts


def mutate(rng: random.Random, text: str) -> str:
    for _ in range(rng.randint(1, 4)):
        lines = text.splitlines(keepends=True) or [""]
        op = rng.randrange(8)
        i = rng.randrange(len(lines))
        if op == 0:  # delete a line
            del lines[i]
        elif op == 1:  # double a line
            lines.insert(i, lines[i])
        elif op == 2:  # swap two lines
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == 3:  # re-indent a line
            lines[i] = " " * rng.randint(0, 6) + lines[i].lstrip(" ")
        text = "".join(lines)
        if op >= 4 and text:
            at = rng.randrange(len(text) + 1)
            if op == 4:
                text = text[:at] + rng.choice(TOKENS) + text[at:]
            elif op == 5:
                text = text[:at] + text[at + rng.randint(1, 8) :]
            elif op == 6:
                text = (
                    text[:at]
                    + chr(rng.choice([rng.randint(32, 126), rng.randint(0, 0x2FFF)]))
                    + text[at:]
                )
            else:
                text = text[:at] + text[at : at + rng.randint(1, 40)] + text[at:]
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text


def texts(rng: random.Random, base: list[str]) -> Iterator[str]:
    while True:
        yield mutate(rng, rng.choice(base))


# ----------------------------------------------------------------- entry points


def _dump(node: Any, empty_at: bool = True) -> Any:
    """A node as plain data; ``empty_at=False``: an empty plain scalar without its
    offsets (libyaml 0.2.5 and 0.2.6 place one differently)."""
    value = node.value
    if node.kind == "map":
        value = [(_dump(k, empty_at), _dump(v, empty_at)) for k, v in value]
    elif node.kind == "seq":
        value = [_dump(v, empty_at) for v in value]
    elif node.kind == "alias":
        value = value.start if value is not None else None
    at: tuple[Any, Any] = (node.start, node.end)
    if not empty_at and node.kind == "scalar" and value in ("", None) and not node.style:
        at = (None, None)
    return (node.kind, *at, value, node.style, node.tag, node.anchor)


def _same_release() -> bool:
    """Whether the C builder links the libyaml release PyYAML reads with: the Python
    builder's events here are PyYAML's, and the pipeline never mixes two releases
    (parse/backends.py); where they differ, only an empty scalar's place may."""
    from cmhash.parse.backends import libyaml_releases

    releases = libyaml_releases()
    return releases is None or releases[0] == releases[1]


def check_build(text: str) -> str | None:
    """None when the C builder and the Python one agree on ``text``, else what differs."""
    from cmhash.errors import NodeError
    from cmhash.native import cext
    from cmhash.parse import builder, events
    from cmhash.parse.libyaml import misread
    from cmhash.parse.tree import MAP, MAX_DEPTH, MAX_SCALAR, SCALAR, SEQ, Node

    c = cext.ctree()
    built = c.build(text, 0, Node, (SCALAR, SEQ, MAP), MAX_DEPTH, MAX_SCALAR)
    py = copy.copy(events.backend("fast"))  # libyaml's events, without the C tree
    py.ctree = None
    try:
        # (not parse_chunk: it sends what libyaml misreads, a tab, ``?:``, to the
        # reference parser before either builder sees it: parse/libyaml.py)
        same = _same_release()
        if not same and misread(text):
            return None  # (the pipeline reads these with the reference parser only)
        if not same and text.startswith("\ufeff"):
            # the two releases place the marks after a leading byte-order mark one apart;
            # the pipeline never builds such a text (SourceText strips the BOM, a later one
            # is refused: read/split.py refuse_ambiguous)
            return None
        want = [_dump(r, same) for r in events._parse_fast(text, 0, py)]
    except builder.Misread:
        return None if built is None else "C built a single-pair flow mapping"
    except NodeError as exc:
        return None if built is None else f"C built what Python refuses ({exc.message})"
    if built is not None and [_dump(r, same) for r in built] != want:
        return "the C tree differs from the Python tree"
    return None


def _shape(node: Any) -> Any:
    """A node without its offsets (libyaml and ruamel place an empty scalar one
    character apart); aliases by their anchor."""
    value = node.value
    if node.kind == "map":
        value = [(_shape(k), _shape(v)) for k, v in value]
    elif node.kind == "seq":
        value = [_shape(v) for v in value]
    elif node.kind == "alias":
        value = node.anchor
    return (node.kind, value, node.style, node.tag, node.anchor)


def check_parsers(text: str) -> str | None:
    """The fast path (libyaml, the C builder) and the exact one (ruamel) read ``text``
    alike or both refuse it (parse/libyaml.py routes what libyaml misreads)."""
    from cmhash.errors import NodeError
    from cmhash.parse import events

    readings = []
    for name in ("fast", "exact"):
        try:
            readings.append([_shape(r) for r in events.parse_chunk(text, 0, events.backend(name))])
        except NodeError:
            readings.append(None)
        except RecursionError:  # (a deep tree compared in Python: not a difference)
            return None
    if readings[0] == readings[1]:
        return None
    verdicts = ["refuses" if r is None else "reads" for r in readings]
    return f"fast {verdicts[0]}, exact {verdicts[1]}" + (
        ": two trees" if verdicts[0] == verdicts[1] else ""
    )


def check_pack(text: str) -> str | None:
    """The analysis summaries of ``text`` through _cpack come back equal to pickle's."""
    from cmhash.analyze import transport
    from cmhash.analyze.chunk import analyze_source
    from cmhash.app.pipeline import kind_table
    from cmhash.errors import InputError
    from cmhash.read.source import SourceText
    from cmhash.settings.stages import stages
    from cmhash.settings.values import Settings

    settings = Settings()
    try:
        infos = analyze_source(
            SourceText("x", text), kind_table(settings), stages(settings).analyze
        )
    except InputError:
        return None
    packed = transport.encode(infos)
    back = transport.decode(packed)
    want = pickle.loads(pickle.dumps(infos))
    if _plain(back) != _plain(want):
        return "a packed result came back different"
    return None


def _plain(x: Any) -> Any:
    """Records (slots, no __eq__) and exceptions as tuples of their fields, to compare."""
    if isinstance(x, BaseException):
        return (type(x).__name__, _plain(x.args), _plain(getattr(x, "__dict__", {})))
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [_plain(v) for v in x])
    if isinstance(x, dict):
        return sorted(((repr(k), _plain(v)) for k, v in x.items()), key=lambda kv: kv[0])
    if isinstance(x, frozenset):
        return sorted(repr(_plain(v)) for v in x)
    slots = [s for c in type(x).__mro__ for s in getattr(c, "__slots__", ())]
    if slots and not isinstance(x, (str, bytes, int)):
        return (type(x).__name__, [_plain(getattr(x, s, "<unset>")) for s in slots])
    return x


# ---------------------------------------------------------------------------- CLI


CLI_RUNS = [["--workers", "1"], ["--workers", "2"], ["explain", "--format", "json"]]


def check_cli(stream: bytes, args: list[str]) -> str | None:
    cmd = (
        [sys.executable, "-m", "cmhash", *args[:1]]
        if args[0] == "explain"
        else [sys.executable, "-m", "cmhash"]
    )
    cmd += ["--no-config", *(args[1:] if args[0] == "explain" else args), "-"]
    results = []
    # the C (default), without it, and the reference parser: one output
    for flag, parser in (("1", "fast"), ("0", "fast"), ("1", "exact")):
        env = {**os.environ, "CMHASH_CTREE": flag}
        r = subprocess.run(
            [*cmd[:-1], "--parser", parser, "-"],
            input=stream,
            capture_output=True,
            env=env,
            timeout=300,
        )
        if r.returncode not in (0, 1, 2):
            said = r.stderr[-400:]
            return (
                f"{' '.join(args)}: exit {r.returncode} with CMHASH_CTREE={flag} "
                f"--parser {parser}: {said!r}"
            )
        results.append((r.returncode, r.stdout, r.stderr))
    if results[0] != results[1]:
        return f"{' '.join(args)}: with C {results[0][0]}, without {results[1][0]}"
    if results[0] != results[2]:
        return f"{' '.join(args)}: --parser fast {results[0][0]}, exact {results[2][0]}"
    return None


# ------------------------------------------------------------------------- driver


def phase(
    name: str, seconds: float, gen: Iterator[Any], check: Callable[[Any], str | None], out: Path
) -> int:
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end:
        item = next(gen)
        problem = check(item)
        n += 1
        if problem is not None:
            data = item if isinstance(item, bytes) else str(item).encode("utf-8", "replace")
            out.write_bytes(data)
            print(f"fuzz {name}: {problem}; the input is in {out}", flush=True)
            raise SystemExit(1)
    print(f"fuzz {name}: {n} inputs, no difference", flush=True)
    return n


def run(seed: int, seconds: float, out: Path) -> None:
    print(f"fuzz: seed {seed} ({seconds:.0f} s a phase)", flush=True)
    rng = random.Random(seed)
    base = corpus_texts()
    phase("_ctree.build", seconds, texts(rng, base), check_build, out)
    phase("fast and exact", seconds, texts(rng, base), check_parsers, out)
    phase("_cpack", seconds, texts(rng, base), check_pack, out)

    def streams() -> Iterator[tuple[bytes, list[str]]]:
        gen = texts(rng, base)
        while True:
            docs = [next(gen) for _ in range(rng.randint(1, 12))]
            yield "\n---\n".join(docs).encode("utf-8"), rng.choice(CLI_RUNS)

    phase("cli", seconds, streams(), lambda item: check_cli(*item), out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=20.0, help="seconds for each phase")
    ap.add_argument("--seed", type=int, action="append", help="seed(s) to run (repeatable)")
    ap.add_argument("--out", type=Path, default=Path("fuzz-failure.yaml"))
    args = ap.parse_args()
    seeds = args.seed or [27, random.SystemRandom().randrange(1 << 32)]
    for seed in seeds:
        run(seed, args.seconds, args.out)


if __name__ == "__main__":
    main()
