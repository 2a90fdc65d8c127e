#!/usr/bin/env python3
"""cmhash benchmark: end-to-end processes against baselines measured in the same run.

Usage (from the repository root, after the README set-up):

    python bench/run.py                      # canonical: make_stream.py 5000
    python bench/run.py --apps 500,5000,50000 --ruamel-max-apps 5000
    python bench/run.py --json results.json  # also write the figures as JSON

It ends with every target of the performance issue it measured, with PASS or FAIL.

Inputs come from ``bench/make_stream.py`` (override: --generator). Every
figure is a whole process, as a user runs it: read a file, write stdout to a file.

* cmhash           ``cmhash STREAM > out`` (automatic workers), and ``--workers 1``
                   with and without the C tree builder (``CMHASH_CTREE=0``), in turn
* C loader         ``yaml.load_all(text, Loader=yaml.CSafeLoader)``, loading only
* ruamel round-trip ``YAML().load_all`` + ``dump_all`` (slow: one run, small sizes only)
* small chart      ``cmhash examples/app.yaml``, a small Helm render on stdin (``helm
                   template`` of tests/fixtures/chart, when helm is on PATH) and ``cmhash
                   CHART``, each run paired with ``python -c "import ruamel.yaml"`` right
                   after it: the ratio of each pair, min / median / max
* explain, report and ``--diff`` on 5,000 apps, against an inject run in the same turns

Times are medians of --runs runs. Peak memory is the larger of the biggest single
process's maximum RSS (from wait4) and the process tree's summed PSS sampled every
20 ms, so forked workers are counted, and pages they share with the parent once. The
sampling reads /proc/PID/smaps_rollup (about 0.8 ms of CPU each, per process): on a
2-CPU machine that takes CPU from a run that uses both, so it is done in one extra run
of each command, after the timed runs, never during them.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_GENERATOR = ROOT / "bench" / "make_stream.py"
DEFAULT_CHART = (ROOT.parent / "shared" / "corpus" / "ingress-nginx" / "deploy" / "static"
                 / "provider" / "cloud" / "deploy.yaml")
SMALL_CHART = ROOT / "examples" / "app.yaml"
HELM_CHART = ROOT / "tests" / "fixtures" / "chart"
IMPORT_RUAMEL = [sys.executable, "-c", "import ruamel.yaml"]
SMALL_TARGET = 1.7  # a small chart's run <= 1.7 x `import ruamel.yaml` (median of the pairs)

C_LOADER = ("import sys, yaml\n"
            "text = open(sys.argv[1], encoding='utf-8').read()\n"
            "for _ in yaml.load_all(text, Loader=yaml.CSafeLoader): pass\n")
RUAMEL_ROUND_TRIP = ("import sys\n"
                     "from ruamel.yaml import YAML\n"
                     "yaml = YAML()\n"
                     "text = open(sys.argv[1], encoding='utf-8').read()\n"
                     "yaml.dump_all(list(yaml.load_all(text)), sys.stdout)\n")


@dataclass
class Measure:
    seconds: float          # median wall time
    runs: list[float]
    peak_mb: float          # max over runs


def _tree(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            with open(f"/proc/{p}/task/{p}/children") as fh:
                todo.extend(int(c) for c in fh.read().split())
        except OSError:
            pass
    return out


def _pss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            for line in fh:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def run_once(cmd: list[str], stdout_path: str, sample: bool = False,
             stdin_path: str | None = None) -> tuple[float, float]:
    """(wall seconds, peak MB) of one process tree: the largest process's maximum RSS,
    and with ``sample`` the tree's summed PSS too (which costs the run CPU time)."""
    peak_tree = 0
    with open(stdout_path, "wb") as out, open(stdin_path or os.devnull, "rb") as inp:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdin=inp, stdout=out, stderr=subprocess.DEVNULL)
        done = threading.Event()

        def sample_tree() -> None:
            nonlocal peak_tree
            while not done.wait(0.02):
                peak_tree = max(peak_tree, sum(_pss_kb(p) for p in _tree(proc.pid)))

        sampler = threading.Thread(target=sample_tree, daemon=True)
        if sample:
            sampler.start()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        done.set()
        if sample:
            sampler.join()
        proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"benchmark command failed (exit {proc.returncode}): {' '.join(cmd)}")
    return wall, max(usage.ru_maxrss, peak_tree) / 1024


def measure(cmd: list[str], runs: int, out: str) -> Measure:
    return interleaved([cmd], runs, out)[0]


def interleaved(cmds: list[list[str]], runs: int, out: str) -> list[Measure]:
    """Short processes, run in turn so that drift in machine load hits each alike."""
    results: list[list[tuple[float, float]]] = [[] for _ in cmds]
    for _ in range(runs):
        for cmd, res in zip(cmds, results, strict=True):
            res.append(run_once(cmd, out))
    peaks = [run_once(cmd, out, sample=True)[1] for cmd in cmds]  # not timed
    return [Measure(statistics.median(w for w, _ in res), [w for w, _ in res],
                    max(peak, *(m for _, m in res))) for res, peak in zip(results, peaks)]


def paired(cmd: list[str], base: list[str], runs: int, out: str,
           stdin_path: str | None = None) -> dict[str, Any]:
    """``cmd`` and ``base`` in turn, run by run: each run's ratio to the ``base`` run right
    after it, so that a change in the machine's load moves both sides of a ratio alike."""
    a: list[float] = []
    b: list[float] = []
    for _ in range(runs):
        a.append(run_once(cmd, out, stdin_path=stdin_path)[0])
        b.append(run_once(base, out)[0])
    ratios = [x / y for x, y in zip(a, b, strict=True)]
    return {"cmhash": {"seconds": statistics.median(a), "runs": a},
            "import_ruamel": {"seconds": statistics.median(b), "runs": b},
            "ratios": ratios, "ratio": statistics.median(ratios),
            "ratio_min": min(ratios), "ratio_max": max(ratios)}


def small_charts(cm: list[str], chart: Path, directory: str) -> list[dict[str, Any]]:
    """The small runs to pair with ``import ruamel.yaml``: label, command, stdin, bytes,
    target. The Helm render is made here, by ``helm template`` (skipped without helm)."""
    runs = [{"label": "examples/app.yaml", "cmd": [*cm, str(SMALL_CHART)], "stdin": None,
             "bytes": SMALL_CHART.stat().st_size, "target": SMALL_TARGET}]
    helm = shutil.which("helm")
    if helm is not None:
        render = Path(directory) / "helm-render.yaml"
        with open(render, "wb") as fh:
            subprocess.run([helm, "template", "demo", str(HELM_CHART)], stdout=fh, check=True)
        runs.append({"label": "a Helm render on stdin (tests/fixtures/chart)", "cmd": cm,
                     "stdin": str(render), "bytes": render.stat().st_size,
                     "target": SMALL_TARGET})
    if chart.exists():
        runs.append({"label": chart.name, "cmd": [*cm, str(chart)], "stdin": None,
                     "bytes": chart.stat().st_size, "target": 2})
    return runs


def compile_bytecode() -> None:
    """pip compiles bytecode when it installs a wheel; an editable install on a machine
    with PYTHONDONTWRITEBYTECODE set would otherwise recompile cmhash on every run."""
    import compileall
    import importlib.util

    spec = importlib.util.find_spec("cmhash")
    if spec is not None and spec.submodule_search_locations:
        for location in spec.submodule_search_locations:
            compileall.compile_dir(location, quiet=1)


def cmhash_cmd() -> list[str]:
    exe = Path(sys.executable).with_name("cmhash")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "cmhash"]


def generate(generator: Path, apps: int, directory: str) -> Path:
    path = Path(directory) / f"stream-{apps}.yaml"
    with open(path, "wb") as fh:
        subprocess.run([sys.executable, str(generator), str(apps)], stdout=fh, check=True)
    return path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--apps", default="5000", help="comma-separated sizes [5000]")
    ap.add_argument("--runs", type=int, default=5, help="runs per figure [5]")
    ap.add_argument("--ruamel-max-apps", type=int, default=5000,
                    help="largest size for the (slow) ruamel round-trip [5000]; 0 = never")
    ap.add_argument("--ruamel-runs", type=int, default=1)
    ap.add_argument("--small-runs", type=int, default=21)
    ap.add_argument("--generator", type=Path, default=DEFAULT_GENERATOR)
    ap.add_argument("--chart", type=Path, default=DEFAULT_CHART)
    ap.add_argument("--json", type=Path, help="write all figures here too")
    args = ap.parse_args()
    if not args.generator.exists():
        ap.error(f"{args.generator} not found (pass --generator)")

    cm = cmhash_cmd()
    compile_bytecode()
    report: dict[str, object] = {
        "machine": {"python": platform.python_version(), "platform": platform.platform(),
                    "cpus": len(os.sched_getaffinity(0))},
        "sizes": [],
    }
    print(f"# cmhash benchmark: Python {platform.python_version()}, "
          f"{len(os.sched_getaffinity(0))} CPUs, {args.runs} runs, medians\n")
    with tempfile.TemporaryDirectory(prefix="cmhash-bench-") as tmp:
        out = os.path.join(tmp, "out.yaml")
        print("| apps | MB | docs | cmhash s | MB/s | peak MB | cmhash 1 worker s | peak MB "
              "| C loader s | ratio | ruamel round-trip s | ruamel / cmhash |")
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for apps in [int(a) for a in args.apps.split(",")]:
            path = generate(args.generator, apps, tmp)
            size_mb = path.stat().st_size / 1e6
            docs = sum(1 for line in open(path, encoding="utf-8") if line.startswith("---"))
            # in turn, run by run, so that a change in the machine's load moves every
            # figure alike: automatic workers, one worker with and without the C tree
            # builder (native/_ctree.c), the C loader
            auto, one, one_py, cload = interleaved(
                [[*cm, str(path)],
                 [*cm, "--workers", "1", str(path)],
                 ["env", "CMHASH_CTREE=0", *cm, "--workers", "1", str(path)],
                 [sys.executable, "-c", C_LOADER, str(path)]], args.runs, out)
            ruamel = None
            if apps <= args.ruamel_max_apps:
                ruamel = measure([sys.executable, "-c", RUAMEL_ROUND_TRIP, str(path)],
                                 args.ruamel_runs, out)
            row = {"apps": apps, "mb": round(size_mb, 2), "docs": docs,
                   "cmhash": asdict(auto), "cmhash_1_worker": asdict(one),
                   "cmhash_1_worker_no_ctree": asdict(one_py),
                   "c_loader": asdict(cload), "ruamel": asdict(ruamel) if ruamel else None,
                   "ratio_c_loader": auto.seconds / cload.seconds,
                   "speedup_vs_ruamel": ruamel.seconds / auto.seconds if ruamel else None}
            report["sizes"].append(row)  # type: ignore[union-attr]
            ru = (f"{ruamel.seconds:.1f} | {ruamel.seconds / auto.seconds:.0f}x" if ruamel
                  else "- | -")
            print(f"| {apps} | {size_mb:.1f} | {docs} | {auto.seconds:.2f} | "
                  f"{size_mb / auto.seconds:.2f} | {auto.peak_mb:.0f} | {one.seconds:.2f} | "
                  f"{one.peak_mb:.0f} | {cload.seconds:.2f} | "
                  f"{auto.seconds / cload.seconds:.2f} | {ru} |", flush=True)
        sizes = report["sizes"]
        assert isinstance(sizes, list)
        print()
        for r in sizes:
            a, b = r["cmhash_1_worker"], r["cmhash_1_worker_no_ctree"]
            print(f"{r['apps']} apps, 1 worker, without the C tree builder (CMHASH_CTREE=0): "
                  f"{b['seconds']:.2f} s, with it {a['seconds']:.2f} s "
                  f"({a['seconds'] / b['seconds']:.2f}x)")
        by_apps = {r["apps"]: r for r in sizes}
        if 5000 in by_apps and 50000 in by_apps:
            lin = by_apps[50000]["cmhash"]["seconds"] / by_apps[5000]["cmhash"]["seconds"]
            report["linearity_50000_over_5000"] = lin
            print(f"\nlinearity: time(50,000) / time(5,000) = {lin:.2f} (target <= 11)")
        for r in sizes:
            limit = 4 * r["mb"] + 100
            print(f"memory at {r['apps']} apps: {r['cmhash']['peak_mb']:.0f} MB "
                  f"(target <= 4 x {r['mb']:.1f} + 100 = {limit:.0f} MB)")

        # the pre-commit hook's and the Helm post-renderer's case: start-up is most of it
        print(f"\nsmall chart vs `import ruamel.yaml` ({args.small_runs} paired runs; "
              "ratio of each pair, min / median / max):")
        smalls: list[dict[str, Any]] = []
        report["small_charts"] = smalls
        for small in small_charts(cm, args.chart, tmp):
            got = paired(small["cmd"], IMPORT_RUAMEL, args.small_runs, out, small["stdin"])
            got.update(label=small["label"], bytes=small["bytes"], target=small["target"])
            smalls.append(got)
            print(f"  {small['label']} ({small['bytes']} bytes): cmhash "
                  f"{got['cmhash']['seconds'] * 1000:.0f} ms, `import ruamel.yaml` "
                  f"{got['import_ruamel']['seconds'] * 1000:.0f} ms; ratio "
                  f"{got['ratio_min']:.2f} / {got['ratio']:.2f} / {got['ratio_max']:.2f} "
                  f"(target <= {small['target']})", flush=True)
        bare = measure([sys.executable, "-c", "pass"], args.small_runs, out)
        report["python_bare"] = asdict(bare)
        print(f"  bare python: {bare.seconds * 1000:.0f} ms")
        if 5000 in by_apps:
            path = Path(tmp) / "stream-5000.yaml"
            if not path.exists():
                path = generate(args.generator, 5000, tmp)
            modified = Path(tmp) / "stream-5000-new.yaml"
            text = path.read_text(encoding="utf-8")
            modified.write_text(text.replace("LOG_LEVEL: \"info\"", "LOG_LEVEL: \"debug\"", 50),
                                encoding="utf-8")
            # against an inject run in the same turns (not the table's, minutes earlier)
            inject, explain, rep, diff = interleaved(
                [[*cm, str(path)],
                 [*cm, "explain", "--format", "json", str(path)],
                 [*cm, "report", "--format", "json", str(path), str(modified)],
                 [*cm, "--diff", str(path)]],
                args.runs, out)
            report["explain_report_5000"] = {"inject": asdict(inject), "explain": asdict(explain),
                                             "report": asdict(rep), "diff": asdict(diff)}
            print(f"\n5,000 apps: inject {inject.seconds:.2f} s, explain {explain.seconds:.2f} s, "
                  f"report {rep.seconds:.2f} s, --diff {diff.seconds:.2f} s "
                  f"({diff.seconds / inject.seconds:.2f}x inject, peak {diff.peak_mb:.0f} MB)")
    report["targets"] = targets(report)
    print("\n| Target | Value | Result |\n|---|---:|---|")
    for t in report["targets"]:  # type: ignore[union-attr]
        print(f"| {t['target']} | {t['value']} | {'PASS' if t['met'] else 'FAIL'} |")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0


def targets(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Every target of the performance issue that this run measured, with its figure."""
    out: list[dict[str, Any]] = []

    def add(target: str, value: float, limit: float, fmt: str, lower_is_better: bool = True
            ) -> None:
        met = value <= limit if lower_is_better else value >= limit
        out.append({"target": target, "value": fmt.format(value), "limit": limit, "met": met})

    by_apps = {r["apps"]: r for r in report["sizes"]}
    canon = by_apps.get(5000)
    if canon:
        cl = canon["c_loader"]["seconds"]
        add("5,000 apps: cmhash --workers 1 <= 0.35 x C loader",
            canon["cmhash_1_worker"]["seconds"] / cl, 0.35, "{:.2f}x")
        add("5,000 apps: cmhash (automatic workers) <= 0.25 x C loader",
            canon["cmhash"]["seconds"] / cl, 0.25, "{:.2f}x")
        add("5,000 apps: >= 12 MB/s end to end",
            canon["mb"] / canon["cmhash"]["seconds"], 12, "{:.1f} MB/s", lower_is_better=False)
        er = report.get("explain_report_5000")
        if er:
            inject = er["inject"]["seconds"]
            add("explain <= 1.25 x inject (same speed-up)",
                er["explain"]["seconds"] / inject, 1.25, "{:.2f}x")
            add("report <= 1.25 x two inject runs",
                er["report"]["seconds"] / (2 * inject), 1.25, "{:.2f}x")
            if "diff" in er:
                add("--diff <= 1.5 x inject (hunks from the edits, linear)",
                    er["diff"]["seconds"] / inject, 1.5, "{:.2f}x")
    if "linearity_50000_over_5000" in report:
        add("time(50,000) / time(5,000) <= 11", report["linearity_50000_over_5000"], 11,
            "{:.2f}")
    for r in report["sizes"]:
        limit = 4 * r["mb"] + 100
        add(f"{r['apps']} apps: peak memory <= 4 x input + 100 MB ({limit:.0f} MB)",
            max(r["cmhash"]["peak_mb"], r["cmhash_1_worker"]["peak_mb"]), limit, "{:.0f} MB")
    small = by_apps.get(500)
    if small and small.get("ruamel"):
        add("500 apps: >= 20 x faster than a ruamel round-trip",
            small["ruamel"]["seconds"] / small["cmhash"]["seconds"], 20, "{:.0f}x",
            lower_is_better=False)
    for small in report.get("small_charts", []):
        add(f"small chart {small['label']} <= {small['target']} x `import ruamel.yaml` "
            "(median of paired runs)", small["ratio"], small["target"], "{:.2f}x")
    return out


if __name__ == "__main__":
    sys.exit(main())
