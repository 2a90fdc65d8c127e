#!/usr/bin/env python3
"""What each piece of C saves: the canonical stream (make_stream.py 5000) through
``cmhash --workers 1`` (inject), ``cmhash`` with its automatic workers, and ``cmhash
explain --format json``, with every C entry point on, and with a group of them left to
their Python references (``CMHASH_C_OFF``).

    python bench/c_gains.py [--runs 9] [--apps 5000] [--only refs,scan] [--off a,b]

Entry points are measured in groups: the ones that only pay together are one group,
and each group is what would go back to Python together. The runs are interleaved (all on, the group off, all on, ...) so
that drift in the machine's load hits each alike; the gain of a group is the median,
over the pairs, of (time with it off / time with all on) - 1, as a percentage of the run,
with the lowest and highest pair beside it. Time here is the processes' CPU time (user
+ system, from wait4, workers included): on a shared machine wall time swings by +-10 %
from run to run, CPU time by far less. ``--off a,b`` measures any set of entry points
together (one row)."""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
from pathlib import Path

from run import DEFAULT_GENERATOR, cmhash_cmd, compile_bytecode, generate

# every C entry point, as CMHASH_C_OFF names it, and the Python reference that runs
# instead (each one binds in one place, native/cext.py)
# (cext.NAMES: any other name is refused, exit 2; tests/native/test_cext_off.py holds them alike)
ENTRIES = {
    "Node": "the whole of _ctree (each entry point reads C nodes): parse/tree.py _PyNode",
    "build": "parse/builder.py _Builder (libyaml's events through PyYAML)",
    "check_edit": "edit/verify.py (a second parse and a tree comparison)",
    "find_refs": "analyze/refs.py find_references' body",
    "resolve_plain": "plan/resolve.py _py_resolve",
    "document_resources": "parse/resources.py resources_of",
    "cuts": "read/split.py cut loop",
    "top_level": "read/split.py top-level scan",
    "_cpack": "analyze/transport.py pickle",
    "_cjson": "jsonout.py / hashing.py Python writers",
}

# what goes back to Python together: a group's entry points only pay together, or share
# a job (its name -> the entry points)
GROUPS = {
    "tree": ("build",),  # (Node itself: the whole of _ctree, every group below with it)
    "self-check": ("check_edit",),
    "refs": ("find_refs",),
    "resources": ("document_resources",),
    "resolve": ("resolve_plain",),
    "scan": ("top_level", "cuts"),
    "json": ("_cjson",),
    "pack": ("_cpack",),
}


def cpu_seconds(cmd: list[str], out: str) -> float:
    """User + system seconds of one whole process (and any it waited for)."""
    with open(out, "wb") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"benchmark command failed: {' '.join(cmd)}")
    return usage.ru_utime + usage.ru_stime


def gain(cmd: list[str], off: str, runs: int, out: str) -> str:
    """The median gain over ``runs`` interleaved pairs, and its range."""
    ratios = []
    for _ in range(runs):
        os.environ.pop("CMHASH_C_OFF", None)
        on = cpu_seconds(cmd, out)
        os.environ["CMHASH_C_OFF"] = off
        ratios.append(cpu_seconds(cmd, out) / on - 1)
    os.environ.pop("CMHASH_C_OFF", None)
    median = 100 * statistics.median(ratios)
    return f"{median:+.1f} % ({100 * min(ratios):+.1f}..{100 * max(ratios):+.1f})"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--apps", type=int, default=5000)
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--only", default="", help="comma-separated groups [all]")
    ap.add_argument("--off", action="append", default=[], help="entry points off together")
    ap.add_argument("--generator", type=Path, default=DEFAULT_GENERATOR)
    args = ap.parse_args()
    names = [n for n in args.only.split(",") if n] or ([] if args.off else list(GROUPS))
    rows = [(n, ",".join(GROUPS[n])) for n in names]
    rows += [(off, off) for off in args.off]
    cm = cmhash_cmd()
    compile_bytecode()
    with tempfile.TemporaryDirectory() as tmp:
        stream = str(generate(args.generator, args.apps, tmp))
        out = os.path.join(tmp, "out")
        runs = {
            "inject --workers 1": [*cm, "--no-config", "--workers", "1", stream],
            "inject (automatic workers)": [*cm, "--no-config", stream],
            "explain --format json": [*cm, "explain", "--no-config", "--format", "json", stream],
        }
        print(f"median and range of {args.runs} paired runs, CPU time")
        print(f"| group | entry points | {' | '.join(runs)} | Python reference |")
        print("| --- | --- | " + " | ".join("---" for _ in runs) + " | --- |")
        for name, off in rows:
            cells = [gain(cmd, off, args.runs, out) for cmd in runs.values()]
            ref = "; ".join(ENTRIES.get(n, "?") for n in off.split(","))
            shown = ", ".join(f"`{n}`" for n in off.split(","))
            print(f"| {name} | {shown} | {' | '.join(cells)} | {ref} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
