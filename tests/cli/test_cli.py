"""Every mode and exit code of the command line, through the real entry point."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, cmhash_command, run_cmhash

CM = b'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: "1"\n'
DEP = (
    b"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\nspec:\n  template:\n"
    b"    spec:\n      containers:\n      - name: main\n        envFrom:\n"
    b"        - configMapRef: {name: cfg}\n"
)
STREAM = CM + b"---\n" + DEP
VALUE = b"ce1f2af2c0d21d1bee5218b58219585fd73d55ed742d334d49940c532041309d"


def test_stdin_to_stdout() -> None:
    res = run_cmhash(["--no-config"], stdin=STREAM)
    assert res.code == 0
    assert VALUE in res.stdout
    assert (
        res.stdout.replace(
            b'    metadata:\n      annotations:\n        checksum/config: "' + VALUE + b'"\n', b""
        )
        == STREAM
    )


def test_explicit_inject_and_dash() -> None:
    assert (
        run_cmhash(["inject", "--no-config", "-"], stdin=STREAM).stdout
        == run_cmhash(["--no-config"], stdin=STREAM).stdout
    )


def test_unchanged_stream_is_echoed() -> None:
    res = run_cmhash(["--no-config"], stdin=CM)
    assert res.code == 0 and res.stdout == CM


def test_cross_file_index_and_order(tmp_path: Path) -> None:
    (tmp_path / "b-config.yaml").write_bytes(CM)
    (tmp_path / "a-deploy.yaml").write_bytes(DEP)  # workload read before its ConfigMap
    res = run_cmhash(["--no-config", str(tmp_path)])
    assert res.code == 0
    assert VALUE in res.stdout
    assert res.stdout.index(b"Deployment") < res.stdout.index(b"ConfigMap")  # sorted file order
    assert b"\n---\n" in res.stdout  # files joined into one valid stream


def test_check_exit_codes(tmp_path: Path) -> None:
    f = tmp_path / "m.yaml"
    f.write_bytes(STREAM)
    res = run_cmhash(["--no-config", "--check", str(f)])
    assert res.code == 1 and res.stdout == b""
    assert "would update" in res.stderr and "Deployment/app" in res.stderr
    assert f.read_bytes() == STREAM
    f.write_bytes(run_cmhash(["--no-config", str(f)]).stdout)
    assert run_cmhash(["--no-config", "--check", str(f)]).code == 0


def test_diff(tmp_path: Path) -> None:
    f = tmp_path / "m.yaml"
    f.write_bytes(STREAM)
    res = run_cmhash(["--no-config", "--diff", "m.yaml"], cwd=tmp_path)
    assert res.code == 0
    assert res.out.startswith("--- a/m.yaml\n+++ b/m.yaml\n@@ ")
    assert '+        checksum/config: "' + VALUE.decode() + '"' in res.out
    assert run_cmhash(["--no-config", "--diff", "--check", "m.yaml"], cwd=tmp_path).code == 1


def test_in_place_atomic_keeps_mode_and_only_changed_files(tmp_path: Path) -> None:
    changed, same = tmp_path / "m.yaml", tmp_path / "same.yaml"
    changed.write_bytes(STREAM)
    same.write_bytes(CM.replace(b"cfg", b"other"))
    os.chmod(changed, 0o640)
    before = same.stat().st_mtime_ns
    res = run_cmhash(["--no-config", "-i", str(tmp_path)])
    assert res.code == 0 and res.stdout == b""
    assert VALUE in changed.read_bytes()
    assert stat.S_IMODE(changed.stat().st_mode) == 0o640
    assert same.stat().st_mtime_ns == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".cmhash-")]


def test_in_place_refuses_stdin() -> None:
    res = run_cmhash(["--no-config", "-i"], stdin=STREAM)
    assert res.code == 2 and "stdin" in res.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["--check", "-i", "x.yaml"],
        ["--annotation-key", "bad key"],
        ["--no-such-option"],
        ["-", "x.yaml"],
    ],
)
def test_usage_errors_exit_2(args: list[str]) -> None:
    res = run_cmhash(["--no-config", *args], stdin=STREAM)
    assert res.code == 2, res.stderr
    assert res.stdout == b""
    assert "Traceback" not in res.stderr


def test_missing_file_exit_2() -> None:
    res = run_cmhash(["--no-config", "does-not-exist.yaml"])
    assert res.code == 2 and "does-not-exist.yaml" in res.stderr


def test_bad_input_leaves_files_untouched(tmp_path: Path) -> None:
    good, bad = tmp_path / "a.yaml", tmp_path / "b.yaml"
    good.write_bytes(STREAM)
    bad.write_bytes(b"kind: ConfigMap\nmetadata: {name: x\n")
    res = run_cmhash(["--no-config", "-i", str(tmp_path)])
    assert res.code == 2 and str(bad) in res.stderr
    assert good.read_bytes() == STREAM


def test_strict() -> None:
    stream = DEP.replace(b"cfg", b"elsewhere")
    assert run_cmhash(["--no-config"], stdin=stream).code == 0
    res = run_cmhash(["--no-config", "--strict"], stdin=stream)
    assert res.code == 2 and res.stdout == b"" and "[missing-reference]" in res.stderr


def test_quiet_hides_warnings() -> None:
    stream = STREAM + b"---\n" + DEP.replace(b"name: app", b"name: b").replace(b"cfg}", b"zz}")
    assert "warning" in run_cmhash(["--no-config"], stdin=stream).stderr
    assert run_cmhash(["--no-config", "-q"], stdin=stream).stderr == ""


def test_config_file_discovered_and_overridden(tmp_path: Path) -> None:
    (tmp_path / ".cmhash.yaml").write_text("annotationKey: example.com/hash\n")
    sub = tmp_path / "sub"
    sub.mkdir()
    res = run_cmhash([], stdin=STREAM, cwd=sub)
    assert b"example.com/hash:" in res.stdout
    res = run_cmhash(["--annotation-key", "other/key"], stdin=STREAM, cwd=sub)
    assert b"other/key:" in res.stdout
    (tmp_path / ".cmhash.yaml").write_text("annotationKey: [1]\n")
    res = run_cmhash([], stdin=STREAM, cwd=sub)
    assert res.code == 2 and ".cmhash.yaml" in res.stderr and "annotationKey" in res.stderr


def test_secret_key_env() -> None:
    stream = (
        b"apiVersion: v1\nkind: Secret\nmetadata: {name: cfg}\nstringData: {a: x}\n---\n"
        + DEP.replace(b"configMapRef", b"secretRef")
    )
    plain = run_cmhash(["--no-config"], stdin=stream).stdout
    keyed = run_cmhash(["--no-config", "--secret-key-env", "K"], stdin=stream, env={"K": "k1"})
    assert keyed.code == 0 and keyed.stdout != plain
    missing = run_cmhash(["--no-config", "--secret-key-env", "NOPE_UNSET"], stdin=stream)
    assert missing.code == 2


def test_log_file(tmp_path: Path) -> None:
    log = tmp_path / "cmhash.log"
    run_cmhash(["--no-config", "--strict"], stdin=DEP, env={"CMHASH_LOG": str(log)})
    text = log.read_text()
    assert "missing-reference" in text and "exit 2" in text


def test_help_documents_exit_codes() -> None:
    res = run_cmhash(["--help"])
    assert res.code == 0 and "Exit codes" in res.out
    res = run_cmhash(["inject", "--help"])
    assert "--in-place" in res.out and "Exit codes" in res.out


def test_python_dash_m_andcmhash_command() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "cmhash", "--no-config"],
        input=STREAM,
        capture_output=True,
        cwd=ROOT,
        check=False,
    )
    assert proc.returncode == 0 and VALUE in proc.stdout


def test_internal_error_exit_3(monkeypatch: pytest.MonkeyPatch) -> None:
    import cmhash.app.pipeline

    def boom(*a: object, **k: object) -> None:
        raise RuntimeError("secret-ish detail")

    monkeypatch.setattr(cmhash.app.pipeline, "run", boom)
    res = run_cmhash(["--no-config"], stdin=STREAM)
    assert res.code == 3
    assert "internal error (RuntimeError" in res.stderr and "Traceback" not in res.stderr
    assert "secret-ish" not in res.stderr


def test_workers_give_identical_output(tmp_path: Path) -> None:
    docs = [
        STREAM.replace(b"cfg", f"cfg{i}".encode()).replace(b"name: app", f"name: app{i}".encode())
        for i in range(60)
    ]
    f = tmp_path / "many.yaml"
    f.write_bytes(b"---\n".join(docs))
    one = run_cmhash(["--no-config", "--workers", "1", str(f)])
    two = run_cmhash(["--no-config", "--workers", "2", str(f)])
    assert one.code == two.code == 0
    assert one.stdout == two.stdout and one.stdout.count(b"checksum/config") == 60


def test_extra_workload_kind_from_config(tmp_path: Path) -> None:
    (tmp_path / ".cmhash.yaml").write_text(
        "workloadKinds:\n- {apiVersion: example.com/v1, kind: Worker, templatePath: spec.pod}\n"
    )
    worker = (
        b"apiVersion: example.com/v1\nkind: Worker\nmetadata: {name: w}\nspec:\n  pod:\n"
        b"    spec:\n      containers:\n      - envFrom:\n        - configMapRef: {name: cfg}\n"
    )
    stream = CM + b"---\n" + worker
    assert run_cmhash(["--no-config"], stdin=stream).stdout == stream  # unknown kind: untouched
    res = run_cmhash([], stdin=stream, cwd=tmp_path)
    assert res.code == 0 and VALUE in res.stdout


def test_exclude_secrets() -> None:
    stream = (
        b"apiVersion: v1\nkind: Secret\nmetadata: {name: cfg}\nstringData: {a: x}\n---\n"
        + DEP.replace(b"configMapRef", b"secretRef")
    )
    assert b"checksum/config" in run_cmhash(["--no-config"], stdin=stream).stdout
    res = run_cmhash(["--no-config", "--exclude-secrets"], stdin=stream)
    assert res.code == 0 and res.stdout == stream  # the only reference is a Secret


def test_max_input_bytes(tmp_path: Path) -> None:
    f = tmp_path / "m.yaml"
    f.write_bytes(STREAM)
    res = run_cmhash(["--no-config", "--max-input-bytes", "10", str(f)])
    assert res.code == 2 and "over the limit" in res.stderr and res.stdout == b""
    assert run_cmhash(["--no-config", "--max-input-bytes", str(len(STREAM)), str(f)]).code == 0


def test_duplicate_object_last_wins() -> None:
    stream = CM + b"---\n" + CM.replace(b'"1"', b'"2"') + b"---\n" + DEP
    res = run_cmhash(["--no-config"], stdin=stream)
    assert res.code == 0 and "[duplicate-object]" in res.stderr
    last_only = run_cmhash(["--no-config"], stdin=CM.replace(b'"1"', b'"2"') + b"---\n" + DEP)
    assert res.stdout.split(b"---\n")[-1] == last_only.stdout.split(b"---\n")[-1]


def test_config_paths_used_without_arguments(tmp_path: Path) -> None:
    (tmp_path / "k8s").mkdir()
    (tmp_path / "k8s" / "m.yaml").write_bytes(STREAM)
    (tmp_path / ".cmhash.yaml").write_text("paths: [k8s]\n")
    res = run_cmhash(["--check"], cwd=tmp_path)
    assert res.code == 1 and "m.yaml" in res.stderr


def test_closed_stdout_exits_141_quietly(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    big.write_bytes(
        CM + b"".join(b"---\n" + DEP.replace(b"name: app", b"name: app%d" % i) for i in range(4000))
    )  # far more than a pipe buffer
    with subprocess.Popen(
        [*cmhash_command(), "--no-config", str(big)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    ) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.read(100)
        proc.stdout.close()
        err = proc.stderr.read()
        assert proc.wait(timeout=60) == 141
    assert b"Traceback" not in err and b"Error" not in err, err


def test_plain_run_imports_only_what_it_needs(tmp_path: Path) -> None:
    """Start-up time matters for hooks and post-renderers: jinja2, jsonschema and the
    pure-Python parser load only for the commands and options that use them."""
    code = (
        "import sys\nfrom cmhash.cli.main import main\n"
        "try:\n    main(['--no-config', sys.argv[1]])\nexcept SystemExit:\n    pass\n"
        "heavy = sorted(m for m in ('jinja2', 'jsonschema', 'ruamel.yaml', 'difflib',"
        " 'tempfile', 'hashlib') if m in sys.modules)\n"
        "sys.stderr.write(repr(heavy))\n"
    )
    f = tmp_path / "app.yaml"
    f.write_bytes(STREAM)
    proc = subprocess.run([sys.executable, "-c", code, str(f)], capture_output=True)
    assert proc.stderr.decode().endswith("[]"), proc.stderr


def test_settings_repr_hides_the_secret_key() -> None:
    from cmhash.settings.values import Settings

    text = repr(Settings(secret_key=b"hunter2-secret"))
    assert "hunter2" not in text and "<hidden>" in text


@pytest.mark.parametrize("env", ["KUSTOMIZE_PLUGIN_HOME", "XDG_CONFIG_HOME"])
def test_kustomize_plugin_installs_where_kustomize_looks(tmp_path: Path, env: str) -> None:
    res = run_cmhash(["install-kustomize-plugin"], env={env: str(tmp_path)})
    assert res.code == 0, res.stderr
    home = tmp_path if env == "KUSTOMIZE_PLUGIN_HOME" else tmp_path / "kustomize" / "plugin"
    exe = home / "cmhash.io" / "v1" / "cmhashtransformer" / "CmhashTransformer"
    assert res.out.strip() == str(exe) and os.access(exe, os.X_OK)
    script = exe.read_text()
    assert '--config "$config" "$@" -' in script and "cmhash" in script


# bench/run.py's defaults: the generator and a chart from the full corpus
@pytest.mark.shared("bench", "make_stream.py")
@pytest.mark.shared("corpus")
def test_benchmark_script_runs(tmp_path: Path) -> None:
    """bench/run.py from the README set-up, at a toy size (timing is not asserted)."""
    out = tmp_path / "bench.json"
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "run.py"),
            "--apps",
            "3",
            "--runs",
            "1",
            "--ruamel-max-apps",
            "3",
            "--small-runs",
            "1",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "| 3 |" in proc.stdout and "small chart" in proc.stdout
    import json

    (size,) = json.loads(out.read_text())["sizes"]
    assert size["docs"] == 12 and size["speedup_vs_ruamel"] > 0


JOIN_FILES = {
    "a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n",
    "b.yaml": "%YAML 1.1\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n",
    "c.yaml": "# only a comment\n",
    "d.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: d\n...\n",
    "e.yaml": "%YAML 1.1\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: e\n",
    "f.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: f",
}


@pytest.mark.parametrize(
    "order",
    [
        sorted(JOIN_FILES),
        ["b.yaml", "c.yaml", "e.yaml", "a.yaml"],
        ["c.yaml", "e.yaml", "f.yaml", "b.yaml"],
    ],
)
def test_joined_output_is_a_valid_stream(tmp_path: Path, order: list[str]) -> None:
    """Joining files never writes '---' before a directive: the stream reads back as the
    same documents, with libyaml, ruamel and cmhash itself (which changes nothing)."""
    import yaml
    from ruamel.yaml import YAML

    d = tmp_path / "in"
    d.mkdir()
    paths = []
    for i, name in enumerate(order):
        (d / f"{i}-{name}").write_text(JOIN_FILES[name])
        paths.append(str(d / f"{i}-{name}"))
    res = run_cmhash(["--no-config", *paths])
    assert res.code == 0, res.stderr
    want = [doc for name in order for doc in yaml.safe_load_all(JOIN_FILES[name]) if doc]
    assert [x for x in yaml.safe_load_all(res.out) if x] == want
    assert [x for x in YAML(typ="safe", pure=True).load_all(res.out) if x] == want
    again = run_cmhash(["--no-config", "-"], stdin=res.stdout)
    assert again.code == 0 and again.stdout == res.stdout


def test_help_shows_the_inject_options_first() -> None:
    res = run_cmhash(["--help"])
    assert res.code == 0
    text = res.out
    assert text.startswith(
        "Usage: cmhash [inject] [OPTIONS] [PATH]...\n       cmhash COMMAND [ARGS]...\n"
    )
    section = text.split("Options (of inject, the default command):\n")[1].split("\n\n")[0]
    flags = [line.split()[0].rstrip(",") for line in section.splitlines() if line.startswith("  -")]
    assert flags[:6] == ["-i", "--check", "--diff", "-n", "--strict", "--annotation-key"]
    assert "Commands:" in text and "explain" in text and "report" in text


@pytest.mark.parametrize(
    ("typo", "meant"),
    [("explian", "explain"), ("reprot", "report"), ("helm-plugin-dri", "helm-plugin-dir")],
)
def test_a_mistyped_command_is_not_read_as_a_file(tmp_path: Path, typo: str, meant: str) -> None:
    res = run_cmhash([typo, "x.yaml"], cwd=tmp_path)
    assert res.code == 2 and res.stdout == b""
    assert res.stderr.strip() == (
        f"cmhash: no such command or file {typo!r}; did you mean 'cmhash {meant}'?"
    )
    # a file of that name is a file
    (tmp_path / typo).write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n")
    assert run_cmhash(["--no-config", typo], cwd=tmp_path).code == 0
    # and a name close to no command is a missing file
    res = run_cmhash(["nothing-like-it.yaml"], cwd=tmp_path)
    assert res.stderr.strip() == "cmhash: nothing-like-it.yaml: no such file or directory"


@pytest.mark.parametrize(
    ("line", "hint"),
    [
        # an option of the command's that inject does not know: click stopped there
        (["-q", "patches", "-", "--helmrelease", "r.yaml"], "patches -q - --helmrelease r.yaml"),
        (["-q", "explain", "x.yaml"], "explain -q x.yaml"),
        (["--strict", "-v", "report", "a.yaml", "b.yaml"], "report --strict -v a.yaml b.yaml"),
        (["--namespace=shop", "explain"], "explain --namespace=shop"),
        (["-qn", "shop", "explain", "x.yaml"], "explain -qn shop x.yaml"),
    ],
)
def test_a_command_after_options_gets_the_hint(tmp_path: Path, line: list[str], hint: str) -> None:
    res = run_cmhash(line, cwd=tmp_path)
    assert res.code == 2 and res.stdout == b""
    word = hint.split()[0]
    assert res.stderr.strip() == (
        f"cmhash: {word}: no such file or directory (a command comes first: cmhash {hint})"
    )


@pytest.mark.parametrize(
    ("line", "command", "options"),
    [
        (["-i", "ci-report"], "ci-report", "-i"),
        (["--diff", "report", "a.yaml", "b.yaml"], "report", "--diff"),
        (["-qi", "explain", "x.yaml"], "explain", "-i"),
        (["--in-place", "--diff", "lock", "x.yaml"], "lock", "--in-place, --diff"),
    ],
)
def test_an_option_the_command_lacks_gets_no_reordering_hint(
    tmp_path: Path, line: list[str], command: str, options: str
) -> None:
    """Moving the command first would only trade the error for click's "No such
    option": say whose option it is instead."""
    res = run_cmhash(line, cwd=tmp_path)
    assert res.code == 2 and res.stdout == b""
    which = "those are options" if "," in options else "that is an option"
    assert res.stderr.strip() == (
        f"cmhash: {command}: no such file or directory (cmhash {command} takes no {options}: "
        f"{which} of cmhash's default command, inject; see cmhash {command} --help)"
    )


def test_an_options_value_or_a_file_named_like_a_command_is_no_command(tmp_path: Path) -> None:
    app = (ROOT / "examples" / "app.yaml").read_text()
    (tmp_path / "app.yaml").write_text(app)
    # -n takes a value: 'explain' is the namespace, app.yaml the input
    res = run_cmhash(["--no-config", "-n", "explain", "app.yaml"], cwd=tmp_path)
    assert res.code == 0, res.stderr
    # a file named like a command is read as a file
    (tmp_path / "patches").write_text(app)
    res = run_cmhash(["--no-config", "-q", "patches"], cwd=tmp_path)
    assert res.code == 0 and b"checksum/config" in res.stdout
