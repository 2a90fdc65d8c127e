"""Command line: options -> Settings -> app.run() -> output and exit code. No YAML logic here."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import click

from cmhash import __version__
from cmhash.errors import (
    EXIT_CHANGED,
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_PIPE,
    CmhashError,
    OutputClosed,
    UsageError,
)
from cmhash.output import err, log, unified_diff

EXIT_CODES_HELP = """\b
Exit codes:
  0  success (nothing to change, or changes written)
  1  changes needed (--check, --diff --check)
  2  bad input or usage: YAML syntax, unreadable file, invalid config,
     unsafe edit, --strict finding
  3  internal error (a bug: please report it)"""

DEFAULT_COMMAND = "inject"


class DefaultGroup(click.Group):
    """``cmhash [OPTIONS] PATH...`` means ``cmhash inject [OPTIONS] PATH...``; the help
    shows inject's options too; a mistyped command is not taken for a file name."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or (args[0] not in self.commands and args[0] not in ("--help", "-h",
                                                                          "--version")):
            if args:
                self._refuse_typo(args[0])
            args = [DEFAULT_COMMAND, *args]
        return super().parse_args(ctx, args)

    def _refuse_typo(self, word: str) -> None:
        """``cmhash explian x``: no such file, but close to a command: say so."""
        if word.startswith("-") or os.path.lexists(word):
            return
        import difflib

        close = difflib.get_close_matches(word, [c for c in self.commands if c != "inject"],
                                          n=1, cutoff=0.75)
        if close:
            raise UsageError(f"no such command or file {word!r}; did you mean "
                             f"'cmhash {close[0]}'?")

    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        formatter.write_usage("cmhash", "[inject] [OPTIONS] [PATH]...")
        formatter.write_usage("cmhash", "COMMAND [ARGS]...", prefix="       ")

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The default command's options come first: they are what most runs use."""
        inject = self.commands[DEFAULT_COMMAND]
        sub = click.Context(inject, info_name=DEFAULT_COMMAND, parent=ctx)
        first = ("in_place", "check", "show_diff", "namespace", "strict", "annotation_key")
        params = sorted((p for p in inject.get_params(sub)
                         if isinstance(p, click.Option) and p.name != "help"),
                        key=lambda p: first.index(p.name) if p.name in first else len(first))
        rows = [r for p in params for r in [p.get_help_record(sub)] if r]
        with formatter.section("Options (of inject, the default command)"):
            formatter.write_dl(rows)
        super().format_options(ctx, formatter)


@click.group(cls=DefaultGroup, context_settings={"help_option_names": ["-h", "--help"]},
             epilog=EXIT_CODES_HELP)
@click.version_option(__version__, prog_name="cmhash")
def cli() -> None:
    """Inject checksums of ConfigMaps and Secrets into the pod templates that use them,
    so that `kubectl apply` rolls exactly the pods whose configuration changed.

    Without a command, `inject` runs: `cmhash [OPTIONS] [PATH...]` reads files,
    directories or - (stdin; also when no PATH is given) and writes the stream to stdout.
    """


def common_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """PATH... and the options that make Settings (inject, explain)."""
    return click.argument("paths", nargs=-1, type=click.Path(allow_dash=True))(
        settings_options(fn))


def settings_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The options that make Settings (build_settings reads them)."""
    opts = [
        click.option("--annotation-key", "--key", "annotation_key", metavar="KEY",
                     help="Pod-template annotation to write [default: checksum/config]."),
        click.option("-n", "--namespace", metavar="NS",
                     help="Namespace that objects without one land in (like kubectl apply -n)."),
        click.option("--strict/--no-strict", default=None,
                     help="A missing non-optional reference is an error (exit 2)."),
        click.option("--jobs/--no-jobs", default=None,
                     help="Annotate Job pod templates (immutable: apply fails on change)."),
        click.option("--pods/--no-pods", default=None,
                     help="Annotate bare Pods (their own metadata.annotations)."),
        click.option("--image-pull-secrets/--no-image-pull-secrets", default=None,
                     help="Count imagePullSecrets as references."),
        click.option("--exclude-secrets/--include-secrets", default=None,
                     help="Leave Secrets out of every checksum."),
        click.option("--secret-key-env", metavar="VAR",
                     help="Hash Secret content with HMAC-SHA256 keyed by this env variable."),
        click.option("--config", "config_path", type=click.Path(dir_okay=False),
                     help="Config file [default: .cmhash.yaml in this or a parent directory]."),
        click.option("--no-config", is_flag=True, help="Ignore .cmhash.yaml files."),
        click.option("--parser", type=click.Choice(["fast", "exact"]), default=None,
                     help="fast: libyaml (default); exact: the pure-Python reference "
                          "parser. Both read the same documents, with the same result."),
        click.option("--max-input-bytes", type=click.IntRange(min=1), default=None,
                     help="Refuse inputs larger than this [default: 268435456]."),
        click.option("--workers", type=click.IntRange(min=0), default=None,
                     help="Processes for big inputs [default: 0 = automatic]."),
        click.option("--exclude", multiple=True, metavar="PATTERN",
                     help="Leave matching files and directories out of directory walks "
                          "(gitignore syntax, relative to the walked directory; repeatable)."),
        click.option("-q", "--quiet", is_flag=True, default=None,
                     help="Print errors only (no warnings or notices)."),
        click.option("-v", "--verbose", is_flag=True,
                     help="Notes (skipped files, inputs, inferred namespace) and tracebacks "
                          "for internal errors."),
    ]
    for opt in reversed(opts):
        fn = opt(fn)
    return fn


@cli.command(epilog=EXIT_CODES_HELP)
@common_options
@click.option("-i", "--in-place", is_flag=True, help="Rewrite changed files in place, atomically.")
@click.option("--check", is_flag=True, help="Write nothing; exit 1 if anything would change.")
@click.option("--diff", "show_diff", is_flag=True,
              help="Print a unified diff instead of the stream (exit 0; 1 with --check).")
def inject(paths: tuple[str, ...], in_place: bool, check: bool, show_diff: bool,
           **opts: Any) -> None:
    """Read manifests (files, directories, or - for stdin; none = stdin), inject checksum
    annotations, write the whole stream to stdout (or --in-place / --check / --diff)."""
    from cmhash import app
    from cmhash.inputs import Mode

    mode = Mode.from_flags(in_place=in_place, check=check, diff=show_diff)
    settings = build_settings(opts)
    inputs = select_inputs(paths, settings, mode)
    if mode is Mode.STREAM:
        from cmhash import krm

        resource_list = krm.detect(inputs.sources)
        if resource_list is not None:
            run_krm(resource_list, opts)
            return
    result = app.run(inputs.sources, settings,
                     allow_empty=mode.on_files and bool(inputs.skipped))
    report_notes(result.notes, quiet=settings.quiet)
    report_findings(result.findings, quiet=settings.quiet)
    if result.has_errors:
        n = sum(1 for f in result.findings if f.level == "error")
        err(f"cmhash: {n} error{'s' if n != 1 else ''}; nothing written")
        raise SystemExit(EXIT_INPUT)
    changed = [f for f in result.files if f.changed]
    if mode.diffs:
        diffs = [(f, unified_diff(f.source.text, f.text, f.source.display,
                                  result.secret_lines(f.source))) for f in changed]
        for f, d in diffs:
            for line in d.withheld:
                err(f"cmhash: {f.source.display}:{line}: diff hunk not shown: the changed "
                    "line also holds Secret data")
        write_stdout("".join(d.text for _, d in diffs))
    if mode.checks:
        for c in result.changes:
            err(f"would update {c.source.display}:{c.line}: {c.workload} ({c.key})")
        if not settings.quiet:
            err(_summary(len(result.changes), len(changed), "would be updated"))
        raise SystemExit(EXIT_CHANGED if changed else EXIT_OK)
    if mode is Mode.IN_PLACE:
        from cmhash.writer import write_files

        write_files(changed, inputs.roots)
        if not settings.quiet:
            for f in changed:
                n = sum(1 for c in result.changes if c.source is f.source)
                err(f"updated {f.source.display} ({n} workload{'s' if n != 1 else ''})")
        return
    if mode is Mode.STREAM:
        if len(result.files) == 1:
            f = result.files[0]
            write_stdout(f.pieces(), bom=f.source.had_bom)
        else:
            write_stdout(app.joined_pieces(result.files))


def select_inputs(paths: Sequence[str], settings: Any, mode: Any) -> Any:
    """The sources of a run (inputs.select), with its notes under --verbose."""
    from cmhash.inputs import select

    inputs = select(paths, mode=mode, config_paths=settings.paths,
                    config_file=settings.config_file, excludes=settings.exclude,
                    max_bytes=settings.max_input_bytes)
    if settings.verbose and not settings.quiet:
        for line in inputs.notes:
            err(f"cmhash: note: {line}")
    if not inputs.sources and inputs.skipped and not mode.on_files:
        raise UsageError(f"no Kubernetes manifests in the input: {len(inputs.skipped)} "
                         f"path{'s' if len(inputs.skipped) != 1 else ''} skipped (e.g. "
                         f"{inputs.skipped[0].path}: {inputs.skipped[0].why}; -v lists them)")
    return inputs


@cli.command(epilog=EXIT_CODES_HELP)
@common_options
@click.option("--format", "fmt", type=click.Choice(["text", "json", "mermaid"]),
              default="text", show_default=True,
              help="text: a tree; json: versioned, schema in schemas/explain.schema.json; "
                   "mermaid: config objects -> workloads.")
def explain(paths: tuple[str, ...], fmt: str, **opts: Any) -> None:
    """Show, for every workload, what it references (kind, name, how, keys, optional),
    whether each target is in the input, and the checksum cmhash would write.
    Writes nothing; findings are listed too."""
    from cmhash import app
    from cmhash.explain import FORMATS, build
    from cmhash.inputs import Mode

    settings = build_settings(opts)
    inputs = select_inputs(paths, settings, Mode.STREAM)
    result = app.run(inputs.sources, settings, keep_plans=True)
    report_notes(result.notes, quiet=settings.quiet)
    write_stdout(FORMATS[fmt](build(result, settings.annotation_key)))
    if result.has_errors:
        raise SystemExit(EXIT_INPUT)


@cli.command(epilog="""\b
Exit codes:
  0  report written (findings or not)
  1  --fail-on: findings of that level or worse
  2  bad input or usage
  3  internal error (a bug: please report it)""")
@click.argument("old", type=click.Path(allow_dash=True))
@click.argument("new", type=click.Path(allow_dash=True))
@settings_options
@click.option("--format", "fmt", type=click.Choice(["markdown", "json", "text", "codequality"]),
              default="markdown", show_default=True,
              help="markdown: for a merge-request comment; json: versioned, schema in "
                   "schemas/report.schema.json; text: for a terminal; codequality: GitLab "
                   "Code Quality artifact.")
@click.option("--fail-on", type=click.Choice(["error", "warning"]), default=None,
              help="Exit 1 when the new side has findings of this level or worse.")
@click.option("--template", "template_file", type=click.Path(dir_okay=False, exists=True),
              help="A jinja2 template instead of the shipped one (markdown and text).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, allow_dash=True),
              help="Write the report to this file (atomically) instead of stdout.")
def report(old: str, new: str, fmt: str, fail_on: str | None, template_file: str | None,
           output: str | None, **opts: Any) -> None:
    """Compare two renders of the same manifests (OLD: e.g. the target branch, NEW: the
    merge request; files, directories or -) and report which workloads will restart and
    why, which use changed configuration but will not restart, changed objects nobody
    uses, and findings (immutable objects that changed are errors).

    Secrets are described by key names only: never a value, never a hash of one."""
    from cmhash import app
    from cmhash import report as rep

    if old == "-" and new == "-":
        raise UsageError("OLD and NEW cannot both be - (stdin)")
    if template_file is not None and callable(rep.FORMATS[fmt]):
        raise UsageError(f"--template applies to --format markdown or text, not {fmt}")
    from cmhash.inputs import Mode, select

    settings = build_settings(opts)
    sides = [app.run(select([p], mode=Mode.STREAM, config_paths=(), config_file=None,
                            excludes=settings.exclude,
                            max_bytes=settings.max_input_bytes).sources,
                     settings, keep_plans=True, allow_empty=True)
             for p in (old, new)]
    data = rep.build(sides[0], sides[1], settings.annotation_key)
    form = rep.FORMATS[fmt]
    text = (form(data) if callable(form) else
            _render_template(rep, data, form, template_file))
    if output and output != "-":
        from cmhash.writer import write_new_file

        write_new_file(output, text)
    else:
        write_stdout(text)
    if rep.fails(data, fail_on):
        raise SystemExit(EXIT_CHANGED)


def _render_template(rep: Any, data: dict[str, Any], name: str, template_file: str | None
                     ) -> str:
    import jinja2

    try:
        return str(rep.render(data, name, template_file))
    except jinja2.TemplateError as exc:
        where = template_file or name
        line = getattr(exc, "lineno", None)
        raise UsageError(f"{where}{f':{line}' if line else ''}: template error: "
                         f"{exc.message or type(exc).__name__}") from None


@cli.command("gitlab-note")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--token-env", default="CMHASH_GITLAB_TOKEN", show_default=True, metavar="VAR",
              help="Environment variable holding a GitLab token with the api scope.")
def gitlab_note(file: str, token_env: str) -> None:
    """Post FILE (a Markdown report) as a note on the pipeline's merge request, or update
    the note an earlier pipeline posted. Reads CI_API_V4_URL, CI_PROJECT_ID and
    CI_MERGE_REQUEST_IID, as GitLab sets them in merge-request pipelines."""
    from cmhash.gitlab import post_from_environment

    how, note = post_from_environment(file, token_env)
    err(f"{how} merge-request note {note}")


@cli.command("helm-plugin-dir")
def helm_plugin_dir() -> None:
    """Print the directory of the Helm 4 post-renderer plugin shipped with cmhash.

    \b
    helm plugin install "$(cmhash helm-plugin-dir)"
    export HELM_PLUGINS="$(dirname "$(cmhash helm-plugin-dir)")"   # or, without installing"""
    from importlib import resources

    click.echo(str(resources.files("cmhash") / "data" / "helm" / "cmhash"))


KUSTOMIZE_GROUP, KUSTOMIZE_VERSION, KUSTOMIZE_KIND = "cmhash.io", "v1", "CmhashTransformer"


@cli.command("install-kustomize-plugin")
@click.option("--plugin-home", type=click.Path(file_okay=False),
              help="[default: $KUSTOMIZE_PLUGIN_HOME, else $XDG_CONFIG_HOME/kustomize/plugin, "
                   "else ~/.config/kustomize/plugin]")
def install_kustomize_plugin(plugin_home: str | None) -> None:
    """Install the kustomize legacy exec transformer (kind CmhashTransformer).

    Then list a CmhashTransformer config under `transformers:` and run
    `kubectl kustomize --enable-alpha-plugins DIR`."""
    home = plugin_home or _kustomize_plugin_home()
    target = os.path.join(os.path.abspath(home), KUSTOMIZE_GROUP, KUSTOMIZE_VERSION,
                          KUSTOMIZE_KIND.lower(), KUSTOMIZE_KIND)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    import shlex

    command = " ".join(shlex.quote(w) for w in _self_command())
    with open(target, "w", encoding="utf-8") as fh:
        fh.write("#!/bin/sh\n"
                 "# cmhash as a kustomize legacy exec transformer. kustomize passes the\n"
                 "# transformer config file as $1 (options: the .cmhash.yaml keys), then the\n"
                 "# config's argsOneLiner words; resources come on stdin.\n"
                 'config="$1"; shift\n'
                 f'exec {command} --config "$config" "$@" -\n')
    os.chmod(target, 0o755)
    click.echo(target)


def _kustomize_plugin_home() -> str:
    env = os.environ.get("KUSTOMIZE_PLUGIN_HOME")
    if env:
        return env
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(xdg, "kustomize", "plugin")


def _self_command() -> list[str]:
    """How to run this very cmhash from a script: the console script beside the
    interpreter, else the one on PATH, else ``python -m cmhash``."""
    import shutil

    beside = os.path.join(os.path.dirname(sys.executable), "cmhash")
    if os.access(beside, os.X_OK):
        return [os.path.abspath(beside)]
    found = shutil.which("cmhash")
    return [os.path.abspath(found)] if found else [sys.executable, "-m", "cmhash"]


def _summary(workloads: int, files: int, verb: str) -> str:
    if not workloads:
        return "nothing to change"
    return (f"{workloads} workload{'s' if workloads != 1 else ''} in {files} "
            f"file{'s' if files != 1 else ''} {verb}")


def run_krm(resource_list: Any, opts: dict[str, Any]) -> None:
    """KRM function mode: options from functionConfig (between the config file and the
    command line), findings and errors as ``results`` in the ResourceList written back."""
    from cmhash import app, krm

    src = resource_list.source
    try:
        settings = build_settings(opts, layer=krm.function_options(resource_list))
        result = app.run([src], settings)
        report_notes(result.notes, quiet=settings.quiet)
    except CmhashError as exc:
        err(f"cmhash: {exc}")
        write_stdout(krm.with_results(src.text, [krm.error_result(str(exc))]), bom=src.had_bom)
        raise SystemExit(exc.exit_code) from None
    shown = report_findings(result.findings, quiet=settings.quiet)
    text = src.text if result.has_errors else result.files[0].text  # errors: items unchanged
    write_stdout(krm.with_results(text, krm.results(resource_list, shown)), bom=src.had_bom)
    if result.has_errors:
        raise SystemExit(EXIT_INPUT)


def build_settings(opts: dict[str, Any], layer: dict[str, Any] | None = None) -> Any:
    """Defaults < config file < ``layer`` (a KRM functionConfig) < command line."""
    from cmhash.settings import (
        Settings,
        find_config,
        load_config_file,
        secret_key_from_env,
        settings_from_mapping,
        validate_annotation_key,
    )

    settings = Settings()
    config_path = opts.get("config_path")
    if config_path is None and not opts.get("no_config"):
        config_path = find_config()
    if config_path:
        settings = settings_from_mapping(load_config_file(config_path), settings)
        config_dir = os.path.dirname(os.path.abspath(config_path))
        settings = settings._replace(
            config_file=config_path,
            paths=tuple(p if os.path.isabs(p) else os.path.relpath(os.path.join(config_dir, p))
                        for p in settings.paths))
    if layer:
        settings = settings_from_mapping(layer, settings)
    key = opts.get("annotation_key")
    if key is not None:
        problem = validate_annotation_key(key)
        if problem:
            raise UsageError(f"--annotation-key {key!r}: {problem}")
    secret_env = opts.get("secret_key_env")
    settings = settings.merged(
        annotation_key=key, namespace=opts.get("namespace"), strict=opts.get("strict"),
        jobs=opts.get("jobs"), pods=opts.get("pods"),
        image_pull_secrets=opts.get("image_pull_secrets"),
        exclude_secrets=opts.get("exclude_secrets"),
        secret_key=secret_key_from_env(secret_env) if secret_env else None,
        parser=opts.get("parser"), max_input_bytes=opts.get("max_input_bytes"),
        workers=opts.get("workers"),
        exclude=settings.exclude + tuple(opts.get("exclude") or ()) or None,
        verbose=opts.get("verbose") or None,
        quiet=opts.get("quiet"))
    from cmhash.progress import wanted

    return settings._replace(progress=layer is None and wanted(quiet=settings.quiet))


def report_notes(notes: Sequence[str], *, quiet: bool) -> None:
    """What the run decided on the user's behalf (stderr, and CMHASH_LOG under Helm 4)."""
    if not quiet:
        for line in notes:
            err(f"cmhash: note: {line}")


def report_findings(findings: Sequence[Any], *, quiet: bool) -> list[Any]:
    """Print findings on stderr (errors only with --quiet); return those printed."""
    shown = [f for f in findings if not (quiet and f.level != "error")]
    for f in shown:
        err(f.format())
    return shown


def write_stdout(text: str | Iterable[str], *, bom: bool = False) -> None:
    """UTF-8, encoded a piece (at most about 1 MiB) at a time: a big stream is never
    held twice (as str and bytes)."""
    out = sys.stdout.buffer
    pieces: Iterable[str] = (text[i:i + (1 << 20)] for i in range(0, len(text), 1 << 20)) \
        if isinstance(text, str) else text
    try:
        if bom:
            out.write(b"\xef\xbb\xbf")
        for piece in pieces:
            out.write(piece.encode("utf-8"))
        out.flush()
    except BrokenPipeError:
        raise OutputClosed from None


def main(argv: Sequence[str] | None = None) -> None:
    """Console entry point: maps every outcome to an exit code, never a traceback for input."""
    from cmhash import signals

    args = list(sys.argv[1:] if argv is None else argv)
    verbose = "-v" in args or "--verbose" in args
    log("run: cmhash " + " ".join(args))
    try:
        cli.main(args=args, prog_name="cmhash", standalone_mode=False)
        code = EXIT_OK
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else EXIT_INPUT
    except click.exceptions.Abort:
        err("cmhash: interrupted")
        code = EXIT_INTERRUPTED
    except click.ClickException as exc:
        err(f"cmhash: {exc.format_message()}")
        code = exc.exit_code if exc.exit_code else EXIT_INPUT
    except CmhashError as exc:
        err(f"cmhash: {exc}")
        code = exc.exit_code
    except KeyboardInterrupt:
        err("cmhash: interrupted")
        code = EXIT_INTERRUPTED
    except signals.Terminated as exc:
        err(f"cmhash: terminated ({exc.name})")
        code = 128 + exc.signum
    except (BrokenPipeError, OutputClosed):
        # the reader went away (cmhash big.yaml | head): stop quietly; later flushes of
        # the closed pipe go to /dev/null instead of raising again at exit
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        code = EXIT_PIPE
    except RecursionError:
        err("cmhash: input nested too deeply")
        code = EXIT_INPUT
    except Exception as exc:  # noqa: BLE001 - the last line of defence
        import traceback

        tb = traceback.extract_tb(exc.__traceback__)
        where = f" at {os.path.basename(tb[-1].filename)}:{tb[-1].lineno}" if tb else ""
        err(f"cmhash: internal error ({type(exc).__name__}{where}); please report it"
            + ("" if verbose else " (run with --verbose for the traceback)"))
        if verbose:
            traceback.print_exc()
        code = EXIT_INTERNAL
    if code:
        log(f"exit {code}")
    sys.exit(code)


def entry() -> None:
    """The console script: ``main``, then leave without tearing the interpreter down.

    Everything is flushed and every file is closed by then; skipping the teardown of a
    few thousand module objects saves about 20 ms, which is most of what a pre-commit
    hook or a Helm post-renderer run of a small chart costs beyond start-up.

    SIGTERM and SIGHUP are handled here, in the process that owns them (not in ``main``,
    which tests call in-process)."""
    from cmhash import signals

    signals.install()
    try:
        main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else EXIT_INPUT
    else:  # pragma: no cover - main always exits
        code = EXIT_OK
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (BrokenPipeError, OSError, ValueError):
            pass
    os._exit(code)

