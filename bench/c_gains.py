#!/usr/bin/env python3
"""What each piece of C saves: the canonical stream (make_stream.py 5000) through
``cmhash --workers 1`` (inject) and ``cmhash explain --format json``, with every C entry
point on, and with each one left to its Python reference in turn (``CMHASH_C_OFF``).

    python bench/c_gains.py [--runs 7] [--apps 5000] [--only build,get]

The runs are interleaved (all on, one off, all on, the next off, ...), so drift in the
machine's load hits each alike; the gain of an entry point is the median, over runs, of
(time with it off / time with all on) - 1, as a percentage of the run. Time here is the
process's CPU time (user + system, from wait4): on a shared machine wall time swings by
+-10 % from run to run, CPU time by far less, and with one worker a run is CPU-bound.
``--off a,b`` measures entry points together (one row)."""

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
    "collect": "analyze/refs.py walk",
    "find_refs": "analyze/refs.py find_references' body",
    "site_refs": "analyze/refs.py _py_site_refs",
    "resolve_plain": "plan/resolve.py _py_resolve",
    "document_resources": "parse/resources.py resources_of",
    "cuts": "read/split.py cut loop",
    "top_level": "read/split.py top-level scan",
    "line_numbers": "read/source.py _py_line_numbers",
    "_cpack": "analyze/transport.py pickle",
    "_cjson": "jsonout.py / hashing.py Python writers",
}


def cpu_seconds(cmd: list[str], out: str) -> float:
    """User + system seconds of one whole process (and any it waited for)."""
    with open(out, "wb") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"benchmark command failed: {' '.join(cmd)}")
    return usage.ru_utime + usage.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--apps", type=int, default=5000)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--only", default="", help="comma-separated entry points [all]")
    ap.add_argument("--off", action="append", default=[], help="entry points off together")
    ap.add_argument("--generator", type=Path, default=DEFAULT_GENERATOR)
    args = ap.parse_args()
    names = [n for n in args.only.split(",") if n] or ([] if args.off else list(ENTRIES))
    names += args.off
    cm = cmhash_cmd()
    compile_bytecode()
    with tempfile.TemporaryDirectory() as tmp:
        stream = str(generate(args.generator, args.apps, tmp))
        out = os.path.join(tmp, "out")
        runs = {
            "inject --workers 1": [*cm, "--no-config", "--workers", "1", stream],
            "explain --format json": [*cm, "explain", "--no-config", "--format", "json", stream],
        }
        print(f"| entry point | {' | '.join(runs)} | Python reference |")
        print("| --- | " + " | ".join("---" for _ in runs) + " | --- |")
        for name in names:
            cells = []
            for cmd in runs.values():
                ratios = []
                for _ in range(args.runs):
                    os.environ.pop("CMHASH_C_OFF", None)
                    on = cpu_seconds(cmd, out)
                    os.environ["CMHASH_C_OFF"] = name
                    off = cpu_seconds(cmd, out)
                    ratios.append(off / on - 1)
                os.environ.pop("CMHASH_C_OFF", None)
                cells.append(f"{100 * statistics.median(ratios):+.1f} %")
            ref = "; ".join(ENTRIES.get(n, "?") for n in name.split(","))
            print(f"| `{name}` | {' | '.join(cells)} | {ref} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
