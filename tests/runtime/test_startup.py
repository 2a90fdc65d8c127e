"""Start-up is most of a small chart's run (the pre-commit hook, the Helm post-renderer):
an inject run imports only what it needs. Modules that cost milliseconds and serve
other paths stay out (measured: bench/run.py, "small chart"); the set a plain run loads
is pinned below, so that a new import on that path is a decision, not an accident."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT
from manifests import big_stream

# imported only on the paths that need them
LAZY = {
    "dataclasses": "generated methods cost 0.5-1.5 ms a class; see cmhash/record.py",
    "ryml": "rapidyaml: inputs of 1 MiB and more only",
    "ruamel": "the exact parser: --parser exact only",
    "re2": "Reloader reload-list patterns (analyze/patterns.py)",
    "jinja2": "report templates",
    "jsonschema": "config files and KRM functionConfig",
    "pathspec": "directory walks with exclude patterns",
    "multiprocessing": "inputs of 4 MiB and more",
    "json": "JSON outputs and inputs (analyze/hashing.py takes the C escaper from _json)",
    "cmhash.settings.config": "config files, --compat, --secret-key-env",
    "cmhash.analyze.patterns": "Reloader reload-list patterns",
    "cmhash.analyze.pool": "inputs of 4 MiB and more",
    "cmhash.analyze.jobs": "--jobs=rename",
    "cmhash.analyze.sources": "source objects (SealedSecret, ExternalSecret, ...)",
    "cmhash.analyze.versioned_sources": "source objects (SealedSecret, ExternalSecret, ...)",
    "cmhash.edit.verify": "an edit the C tree check cannot tell",
    "cmhash.edit.cverify": "installs without the C tree builder",
    "cmhash.plan.versioning": "versioned names",
    "cmhash.explain": "cmhash explain",
    "cmhash.report": "cmhash report",
    "cmhash.integrations": "KRM, patches, CI, plugins",
    "cmhash.mermaid": "explain --format mermaid",
    "cmhash.jsonout": "JSON outputs",
    "cmhash.write.writer": "--in-place",
}

# Every cmhash module a plain run imports: ``cmhash app.yaml`` through the console
# script, no config file, no Reloader pattern. A change here is on purpose: say why in
# the commit (what the plain path now needs), or import the new module where it is used.
PLAIN = {
    "cmhash",
    "cmhash.__main__",
    "cmhash.analyze",
    "cmhash.analyze.annotations",
    "cmhash.analyze.chunk",
    "cmhash.analyze.configs",
    "cmhash.analyze.declared",
    "cmhash.analyze.hashing",
    "cmhash.analyze.options",
    "cmhash.analyze.refs",
    "cmhash.analyze.stage",
    "cmhash.analyze.summaries",
    "cmhash.analyze.versioned",
    "cmhash.analyze.workload",
    "cmhash.app",
    "cmhash.app.pipeline",
    "cmhash.app.result",
    "cmhash.cli",
    "cmhash.cli.exits",
    "cmhash.cli.inject",
    "cmhash.cli.main",
    "cmhash.cli.options",
    "cmhash.deliver",
    "cmhash.edit",
    "cmhash.edit.splice",
    "cmhash.edit.treecheck",
    "cmhash.errors",
    "cmhash.findings",
    "cmhash.knowledge",
    "cmhash.knowledge.compat",
    "cmhash.knowledge.helm",
    "cmhash.knowledge.kinds",
    "cmhash.knowledge.operators",
    "cmhash.knowledge.podspec",
    "cmhash.knowledge.sources",
    "cmhash.knowledge.versioning",
    "cmhash.model",
    "cmhash.native",
    "cmhash.native._ctree",
    "cmhash.native.cext",
    "cmhash.output",
    "cmhash.parse",
    "cmhash.parse.backends",
    "cmhash.parse.builder",
    "cmhash.parse.events",
    "cmhash.parse.k8syaml",
    "cmhash.parse.libyaml",
    "cmhash.parse.resources",
    "cmhash.parse.tree",
    "cmhash.plan",
    "cmhash.plan.helm",
    "cmhash.plan.index",
    "cmhash.plan.options",
    "cmhash.plan.resolve",
    "cmhash.plan.scopes",
    "cmhash.plan.selection",
    "cmhash.plan.workload",
    "cmhash.plan.workplan",
    "cmhash.read",
    "cmhash.read.inputs",
    "cmhash.read.kustfile",
    "cmhash.read.kustomize",
    "cmhash.read.source",
    "cmhash.read.split",
    "cmhash.read.stdin",
    "cmhash.record",
    "cmhash.runtime",
    "cmhash.runtime.early",
    "cmhash.runtime.lifetime",
    "cmhash.runtime.progress",
    "cmhash.runtime.signals",
    "cmhash.settings",
    "cmhash.settings.layering",
    "cmhash.settings.stages",
    "cmhash.settings.values",
    "cmhash.write",
    "cmhash.write.emit",
    "cmhash.write.options",
}

# The console script (cmhash.__main__:entry), with os._exit wrapped to list the loaded
# modules on stderr: it imports nothing of its own (not even json) that would hide one.
_CONSOLE = """
import os, sys
_exit = os._exit
def _listed(code):
    sys.stderr.write("\\nmodules: " + " ".join(sorted(sys.modules)) + "\\n")
    sys.stderr.flush()
    _exit(code)
os._exit = _listed
sys.argv[0] = "cmhash"
from cmhash.__main__ import entry
entry()
"""


def _loaded(args: list[str], cwd: Path, stdin: bytes = b"") -> set[str]:
    """Every module in sys.modules at the end of a console-script run."""
    res = subprocess.run(
        [sys.executable, "-c", _CONSOLE, *args], input=stdin, capture_output=True, cwd=cwd
    )
    assert res.returncode in (0, 1), res.stderr
    last = res.stderr.decode().rstrip("\n").rsplit("\n", 1)[-1]
    assert last.startswith("modules: "), res.stderr
    return set(last.split()[1:])


def _imported(code: str) -> set[str]:
    """Every module in sys.modules after ``code`` ran (a run through cli.main.main)."""
    res = subprocess.run(
        [sys.executable, "-c", code + "\nsys.stderr.write(' '.join(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    return set(res.stderr.rsplit("\n", 1)[-1].split())


def _lazy_ones(modules: set[str]) -> dict[str, str]:
    return {
        name: why
        for name, why in LAZY.items()
        if any(m == name or m.startswith(name + ".") for m in modules)
    }


@pytest.fixture
def chart(tmp_path: Path) -> Path:
    """examples/app.yaml in a directory with no .cmhash.yaml up to the root."""
    from cmhash.settings.values import find_config

    assert find_config(str(tmp_path)) is None, "a .cmhash.yaml above the temporary directory"
    (tmp_path / "app.yaml").write_bytes((ROOT / "examples" / "app.yaml").read_bytes())
    return tmp_path


def test_a_plain_run_imports_the_pinned_set(chart: Path) -> None:
    """``cmhash app.yaml``: exactly these cmhash modules, none of the lazy ones."""
    loaded = _loaded(["app.yaml"], chart)
    cmhash = {m for m in loaded if m.split(".")[0] == "cmhash"}
    assert sorted(cmhash - PLAIN) == [], "new on the plain path: import where it is used"
    assert sorted(PLAIN - cmhash) == [], "no longer imported: take it out of PLAIN"
    assert not _lazy_ones(loaded)


# Each mode of a plain run against the plain set: what it adds, what it leaves out, and
# which of LAZY it may load (write/writer.py still builds its _Job with dataclasses)
# (read.manifests: whether a file is a manifest, asked of the files these modes skip)
MODES = {
    "stdin": (["-"], set(), {"cmhash.read.kustomize", "cmhash.read.kustfile"}, set()),
    "--in-place": (
        ["-i", "app.yaml"],
        {"cmhash.write.writer", "cmhash.visible", "cmhash.read.manifests"},
        set(),
        {"cmhash.write.writer", "dataclasses"},
    ),
    "--check": (["--check", "app.yaml"], {"cmhash.visible", "cmhash.read.manifests"}, set(), set()),
    "--diff": (
        ["--diff", "app.yaml"],
        {"cmhash.write.diff", "cmhash.read.manifests"},
        set(),
        set(),
    ),
}


@pytest.mark.parametrize("mode", MODES)
def test_each_mode_of_a_plain_run_imports_its_own_few(chart: Path, mode: str) -> None:
    args, added, left_out, lazy = MODES[mode]
    stdin = (chart / "app.yaml").read_bytes() if args == ["-"] else b""
    loaded = _loaded(args, chart, stdin)
    cmhash = {m for m in loaded if m.split(".")[0] == "cmhash"}
    assert cmhash - PLAIN == added
    assert PLAIN - cmhash == left_out
    assert set(_lazy_ones(loaded)) <= lazy


def test_a_reload_list_imports_re2_and_a_config_file_jsonschema(chart: Path) -> None:
    """What the plain path leaves out still loads when a run needs it."""
    text = (chart / "app.yaml").read_text()
    (chart / "app.yaml").write_text(
        text.replace(
            "  name: web\n  namespace: shop\n",
            "  name: web\n  namespace: shop\n  annotations:\n"
            '    configmap.reloader.stakater.com/reload: "web-.*"\n',
        )
    )
    assert "configmap.reloader" in (chart / "app.yaml").read_text()
    assert "re2" in _loaded(["app.yaml"], chart)
    (chart / ".cmhash.yaml").write_text("strict: false\n")
    assert {"jsonschema", "cmhash.settings.config"} <= _loaded(["app.yaml"], chart)


def test_with_the_c_tree_builder_pyyaml_is_not_imported() -> None:
    """The C tree builder (native/_ctree.c) builds every document of a plain chart, and
    the tree self-check (edit/treecheck.py) verifies its edits: PyYAML (~10 ms) is left
    for the documents and checks that need its events."""
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
