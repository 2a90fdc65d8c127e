"""Start-up is most of a small chart's run (the pre-commit hook, the Helm post-renderer):
an inject run imports only what it needs. Modules that cost milliseconds and serve
other paths stay out (measured: bench/run.py, "small chart")."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import ROOT
from manifests import big_stream

# imported only on the paths that need them
LAZY = {
    "dataclasses": "generated methods cost 0.5-1.5 ms a class; see cmhash/record.py",
    "ryml": "rapidyaml: inputs of 1 MiB and more only",
    "ruamel": "the exact parser: --parser exact only",
    "jinja2": "report templates",
    "jsonschema": "config files and KRM functionConfig",
    "pathspec": "directory walks with exclude patterns",
    "multiprocessing": "inputs of 4 MiB and more",
    "cmhash.plan.versioning": "versioned names",
    "cmhash.explain": "cmhash explain",
    "cmhash.report": "cmhash report",
    "cmhash.write.writer": "--in-place",
}


def _imported(code: str) -> set[str]:
    res = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    return {
        line.rsplit("|", 1)[1].strip()
        for line in res.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }


def test_an_inject_run_imports_only_what_it_needs() -> None:
    baseline = _imported("import click, yaml")  # whatever our dependencies import
    run = _imported(
        "import sys; from cmhash.cli.main import main; sys.argv = ['cmhash', '--no-config', "
        "'examples/app.yaml']\ntry:\n    main()\nexcept SystemExit:\n    pass"
    )
    loaded = {m for m in run - baseline if m.split(".")[0] in {n.split(".")[0] for n in LAZY}}
    unexpected = {
        name: why
        for name, why in LAZY.items()
        if any(m == name or m.startswith(name + ".") for m in loaded)
    }
    assert not unexpected, unexpected


def test_with_the_c_tree_builder_pyyaml_is_not_imported() -> None:
    """The C tree builder (native/_ctree.c) builds every document of a plain chart, and
    the tree self-check (edit/treecheck.py) verifies its edits: PyYAML (~10 ms) is left
    for the documents and checks that need its events."""
    import pytest

    pytest.importorskip("cmhash.native._ctree")
    run = _imported(
        "import sys; from cmhash.cli.main import main; sys.argv = ['cmhash', '--no-config', "
        "'examples/app.yaml']\ntry:\n    main()\nexcept SystemExit:\n    pass"
    )
    assert "yaml" not in run
    assert "cmhash.native._ctree" in run


def test_with_the_c_tree_builder_a_big_input_does_not_import_rapidyaml(tmp_path: Path) -> None:
    """rapidyaml's self-check (edit/cverify.py) is the fallback for installs without the
    C tree builder; with it, treecheck.py checks every plain edit, faster, and neither
    rapidyaml nor PyYAML is imported even for a big input."""
    import pytest

    pytest.importorskip("cmhash.native._ctree")
    pytest.importorskip("ryml")
    big = tmp_path / "big.yaml"
    deployment = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\nspec:\n  template:\n"
        "    spec:\n      containers:\n      - name: c\n        envFrom:\n"
        "        - configMapRef: {name: c1}\n"
    )
    big.write_bytes(big_stream(3000, "x" * 300) + b"\n---\n" + deployment.encode())
    assert big.stat().st_size >= 1 << 20  # the size where rapidyaml used to be imported
    run = _imported(
        "import sys; from cmhash.cli.main import main; sys.argv = ['cmhash', '--no-config', "
        f"'--workers', '1', {str(big)!r}]\ntry:\n    main()\nexcept SystemExit:\n    pass"
    )
    assert "ryml" not in run and "yaml" not in run
    assert "cmhash.native._ctree" in run


def test_the_console_script_holds_a_run_to_the_exit(tmp_path: Path) -> None:
    """cli.entry ends with os._exit: what the run built is held to the end instead of
    being freed just before (lifetime.py); main called in-process frees it as usual."""
    manifest = tmp_path / "app.yaml"
    manifest.write_text((ROOT / "examples" / "app.yaml").read_text())
    code = (
        "import os, sys\n"
        "from cmhash.cli import main as cli\nfrom cmhash.runtime import lifetime\n"
        "exit = os._exit\n"
        "def report(code):\n"
        "    sys.stderr.write(f'held {len(lifetime._held)}\\n'); sys.stderr.flush(); exit(code)\n"
        "os._exit = report\n"
        f"sys.argv = ['cmhash', {str(manifest)!r}]\n"
        "cli.entry()\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert res.returncode == 0, res.stderr
    assert "checksum/config" in res.stdout
    assert "held 2" in res.stderr  # the summaries and the result


def test_main_in_process_holds_nothing() -> None:
    from click.testing import CliRunner

    from cmhash.cli import main as cli
    from cmhash.runtime import lifetime

    assert lifetime._held is None
    res = CliRunner().invoke(cli.cli, [str(ROOT / "examples" / "app.yaml")])
    assert res.exit_code == 0
    assert lifetime._held is None


def test_the_console_script_turns_the_collector_off_before_importing() -> None:
    """The console script (pyproject's cmhash = cmhash.__main__:entry) and ``python -m
    cmhash`` import nothing before the cyclic collector is off: importing click and
    cmhash's modules then triggers no collections."""
    import tomllib

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["cmhash"] == "cmhash.__main__:entry"
    code = (
        "import gc, sys\n"
        "class Spy:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name in ('click', 'cmhash.cli.main'):\n"
        "            print(name, 'gc', gc.isenabled())\n"
        "sys.meta_path.insert(0, Spy())\n"
        "import cmhash.__main__ as m\n"
        "print('after import', 'click' in sys.modules, 'cmhash.cli.main' in sys.modules)\n"
        "sys.argv = ['cmhash', '--version']\n"
        "m.entry()\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0] == "after import False False"
    assert "cmhash.cli.main gc False" in lines and "click gc False" in lines
    assert "cmhash, version" in res.stdout
