#!/usr/bin/env python3
"""Reloader pattern benchmark: 1,000 workloads with hostile reload patterns against
10,000 ConfigMap/Secret names, one whole ``cmhash`` process.

Usage (from the repository root, after the README set-up):

    python bench/patterns.py                 # write the stream, time 5 runs, print medians
    python bench/patterns.py --write FILE    # only write the stream (to time it otherwise)

Every workload carries ``configmap.reloader.stakater.com/reload`` and
``secret.reloader.stakater.com/reload`` lists of patterns that backtrack exponentially
in a backtracking engine (``(a+)+``, ``([a-z0-9]+-?)*config``, ``(x+x+)+y``, …), each
made distinct per workload, so no cache helps: about 6,000 distinct patterns. The
object names are long runs that such patterns choke on (``aaaa…``, ``app-app-…``).
Target: under one second for the whole process.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HOSTILE = (
    "(a+)+{i}",
    "([a-z0-9]+-?)*config{i}",
    "(x+x+)+y{i}",
    "(.*a){{12}}{i}",
    "(a|aa)*b{i}",
    "(app|app-[0-9]+)*-cfg-{i}",
)

CM = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  k: "{i}"\n'
SECRET = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {name}\nstringData:\n  k: \"{i}\"\n"
DEP = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: w{i}\n  annotations:\n"
    "    configmap.reloader.stakater.com/reload: '{cms}'\n"
    "    secret.reloader.stakater.com/reload: '{secrets}'\n"
    "spec:\n  selector:\n    matchLabels: {{app: w{i}}}\n  template:\n    metadata:\n"
    "      labels: {{app: w{i}}}\n    spec:\n      containers:\n      - name: c\n"
    "        image: i\n        envFrom:\n        - configMapRef: {{name: {ref}}}\n"
)


def name(i: int) -> str:
    """Long names a backtracking engine chokes on, all valid object names."""
    kinds = ("a" * 40 + f"-{i}", "app-" * 12 + f"x{i}", "x" * 50 + f"-{i}", f"app-cfg-{i}")
    return kinds[i % len(kinds)]


def stream(workloads: int = 1000, objects: int = 10000) -> str:
    docs = []
    for i in range(objects):
        tmpl = CM if i % 2 == 0 else SECRET
        docs.append(tmpl.format(name=name(i), i=i))
    for i in range(workloads):
        cms = ",".join(p.format(i=i) for p in HOSTILE[:3])
        secrets = ",".join(p.format(i=i) for p in HOSTILE[3:])
        docs.append(DEP.format(i=i, cms=cms, secrets=secrets, ref=name((2 * i) % objects)))
    return "---\n".join(docs)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", type=Path, help="only write the stream to this file")
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    if args.write:
        args.write.write_text(stream(), encoding="utf-8")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "patterns.yaml"
        path.write_text(stream(), encoding="utf-8")
        times = []
        for _ in range(args.runs + 1):  # the first is a warm-up
            start = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", "cmhash", "--no-config", "-q", str(path)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                check=False,
            )
            times.append(time.perf_counter() - start)
            if done.returncode != 0:
                print(done.stderr.decode(), file=sys.stderr)
                return 1
        median = statistics.median(times[1:])
        verdict = "PASS" if median < 1.0 else "FAIL"
        print(f"patterns: 1,000 workloads x 10,000 names: median {median:.3f} s  {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
