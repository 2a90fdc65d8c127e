"""The command line, and only that: click options -> Settings (settings.layered) -> the
pipeline (app.run) -> output and an exit code (deliver.py). The one place that exits."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import click

from cmhash import __version__
from cmhash.errors import (
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_PIPE,
    CmhashError,
    OutputClosed,
    UsageError,
)
from cmhash.output import err, log

if TYPE_CHECKING:
    from cmhash.inputs import Inputs, Mode
    from cmhash.settings import Settings

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
        if not args or (
            args[0] not in self.commands and args[0] not in ("--help", "-h", "--version")
        ):
            if args:
                self._refuse_typo(args[0])
            args = [DEFAULT_COMMAND, *args]
        return super().parse_args(ctx, args)

    def _refuse_typo(self, word: str) -> None:
        """``cmhash explian x``: no such file, but close to a command: say so."""
        if word.startswith("-") or os.path.lexists(word):
            return
        import difflib

        close = difflib.get_close_matches(
            word, [c for c in self.commands if c != "inject"], n=1, cutoff=0.75
        )
        if close:
            raise UsageError(f"no such command or file {word!r}; did you mean 'cmhash {close[0]}'?")

    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        formatter.write_usage("cmhash", "[inject] [OPTIONS] [PATH]...")
        formatter.write_usage("cmhash", "COMMAND [ARGS]...", prefix="       ")

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The default command's options come first: they are what most runs use."""
        inject = self.commands[DEFAULT_COMMAND]
        sub = click.Context(inject, info_name=DEFAULT_COMMAND, parent=ctx)
        first = ("in_place", "check", "show_diff", "namespace", "strict", "annotation_key")
        params = sorted(
            (p for p in inject.get_params(sub) if isinstance(p, click.Option) and p.name != "help"),
            key=lambda p: first.index(p.name) if p.name in first else len(first),
        )
        rows = [r for p in params for r in [p.get_help_record(sub)] if r]
        with formatter.section("Options (of inject, the default command)"):
            formatter.write_dl(rows)
        super().format_options(ctx, formatter)


@click.group(
    cls=DefaultGroup,
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog=EXIT_CODES_HELP,
)
@click.version_option(__version__, prog_name="cmhash")
def cli() -> None:
    """Inject checksums of ConfigMaps and Secrets into the pod templates that use them,
    so that `kubectl apply` rolls exactly the pods whose configuration changed.

    Without a command, `inject` runs: `cmhash [OPTIONS] [PATH...]` reads files,
    directories or - (stdin; also when no PATH is given) and writes the stream to stdout.
    """


def common_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """PATH... and the options that make Settings (inject, explain)."""
    return click.argument("paths", nargs=-1, type=click.Path(allow_dash=True))(settings_options(fn))


SETTINGS_OPTIONS = [
    click.option(
        "--annotation-key",
        "--key",
        "annotation_key",
        metavar="KEY",
        help="Pod-template annotation to write [default: checksum/config].",
    ),
    click.option(
        "-n",
        "--namespace",
        metavar="NS",
        help="Namespace that objects without one land in (like kubectl apply -n).",
    ),
    click.option(
        "--strict/--no-strict",
        default=None,
        help="A missing non-optional reference is an error (exit 2).",
    ),
    click.option(
        "--jobs/--no-jobs",
        default=None,
        help="Annotate Job pod templates (immutable: apply fails on change).",
    ),
    click.option(
        "--pods/--no-pods",
        default=None,
        help="Annotate bare Pods (their own metadata.annotations).",
    ),
    click.option(
        "--image-pull-secrets/--no-image-pull-secrets",
        default=None,
        help="Count imagePullSecrets as references.",
    ),
    click.option(
        "--exclude-secrets/--include-secrets",
        default=None,
        help="Leave Secrets out of every checksum.",
    ),
    click.option(
        "--secret-key-env",
        metavar="VAR",
        help="Hash Secret content with HMAC-SHA256 keyed by this env variable.",
    ),
    click.option(
        "--config",
        "config_path",
        type=click.Path(dir_okay=False),
        help="Config file [default: .cmhash.yaml in this or a parent directory].",
    ),
    click.option("--no-config", is_flag=True, help="Ignore .cmhash.yaml files."),
    click.option(
        "--parser",
        type=click.Choice(["fast", "exact"]),
        default=None,
        help="fast: libyaml (default); exact: the pure-Python reference "
        "parser. Both read the same documents, with the same result.",
    ),
    click.option(
        "--max-input-bytes",
        type=click.IntRange(min=1),
        default=None,
        help="Refuse inputs larger than this [default: 268435456].",
    ),
    click.option(
        "--workers",
        type=click.IntRange(min=0),
        default=None,
        help="Processes for big inputs [default: 0 = automatic].",
    ),
    click.option(
        "--exclude",
        multiple=True,
        metavar="PATTERN",
        help="Leave matching files and directories out of directory walks "
        "(gitignore syntax, relative to the walked directory; repeatable).",
    ),
    click.option(
        "-q",
        "--quiet",
        is_flag=True,
        default=None,
        help="Print errors only (no warnings or notices).",
    ),
    click.option(
        "-v",
        "--verbose",
        is_flag=True,
        help="Notes (skipped files, inputs, inferred namespace) and tracebacks "
        "for internal errors.",
    ),
]


def settings_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The options that make Settings (settings.layered reads them by name)."""
    for opt in reversed(SETTINGS_OPTIONS):
        fn = opt(fn)
    return fn


def _inputs(paths: Sequence[str], settings: Settings, mode: Mode) -> Inputs:
    """The sources of a run (inputs.select), with its notes under --verbose."""
    from cmhash.inputs import select

    inputs = select(
        paths,
        mode=mode,
        config_paths=settings.paths,
        config_file=settings.config_file,
        excludes=settings.exclude,
        max_bytes=settings.max_input_bytes,
    )
    if settings.verbose and not settings.quiet:
        for line in inputs.notes:
            err(f"cmhash: note: {line}")
    if not inputs.sources and inputs.skipped and not mode.on_files:
        first = inputs.skipped[0]
        raise UsageError(
            f"no Kubernetes manifests in the input: {len(inputs.skipped)} "
            f"path{'s' if len(inputs.skipped) != 1 else ''} skipped (e.g. "
            f"{first.path}: {first.why}; -v lists them)"
        )
    return inputs


@cli.command(epilog=EXIT_CODES_HELP)
@common_options
@click.option("-i", "--in-place", is_flag=True, help="Rewrite changed files in place, atomically.")
@click.option("--check", is_flag=True, help="Write nothing; exit 1 if anything would change.")
@click.option(
    "--diff",
    "show_diff",
    is_flag=True,
    help="Print a unified diff instead of the stream (exit 0; 1 with --check).",
)
def inject(
    paths: tuple[str, ...], in_place: bool, check: bool, show_diff: bool, **opts: Any
) -> None:
    """Read manifests (files, directories, or - for stdin; none = stdin), inject checksum
    annotations, write the whole stream to stdout (or --in-place / --check / --diff)."""
    from cmhash import app
    from cmhash.deliver import deliver
    from cmhash.inputs import Mode
    from cmhash.settings import layered

    mode = Mode.from_flags(in_place=in_place, check=check, diff=show_diff)
    settings = layered(opts)
    inputs = _inputs(paths, settings, mode)
    if mode is Mode.STREAM:
        from cmhash import krm

        resource_list = krm.detect(inputs.sources)
        if resource_list is not None:
            raise SystemExit(krm.run(resource_list, opts))
    result = app.run(inputs.sources, settings, allow_empty=mode.on_files and bool(inputs.skipped))
    raise SystemExit(deliver(mode, result, inputs.roots, settings))


@cli.command(epilog=EXIT_CODES_HELP)
@common_options
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "mermaid"]),
    default="text",
    show_default=True,
    help="text: a tree; json: versioned, schema in schemas/explain.schema.json; "
    "mermaid: config objects -> workloads.",
)
def explain(paths: tuple[str, ...], fmt: str, **opts: Any) -> None:
    """Show, for every workload, what it references (kind, name, how, keys, optional),
    whether each target is in the input, and the checksum cmhash would write.
    Writes nothing; findings are listed too."""
    from cmhash import app
    from cmhash.explain import FORMATS, build
    from cmhash.inputs import Mode
    from cmhash.output import report_notes, write_stdout
    from cmhash.settings import layered

    settings = layered(opts)
    result = app.run(_inputs(paths, settings, Mode.STREAM).sources, settings, keep_plans=True)
    report_notes(result.notes, quiet=settings.quiet)
    write_stdout(FORMATS[fmt](build(result, settings.annotation_key)))
    if result.has_errors:
        raise SystemExit(EXIT_INPUT)


@cli.command(
    epilog="""\b
Exit codes:
  0  report written (findings or not)
  1  --fail-on: findings of that level or worse
  2  bad input or usage
  3  internal error (a bug: please report it)"""
)
@click.argument("old", type=click.Path(allow_dash=True))
@click.argument("new", type=click.Path(allow_dash=True))
@settings_options
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["markdown", "json", "text", "codequality"]),
    default="markdown",
    show_default=True,
    help="markdown: for a merge-request comment; json: versioned, schema in "
    "schemas/report.schema.json; text: for a terminal; codequality: GitLab "
    "Code Quality artifact.",
)
@click.option(
    "--fail-on",
    type=click.Choice(["error", "warning"]),
    default=None,
    help="Exit 1 when the new side has findings of this level or worse.",
)
@click.option(
    "--template",
    "template_file",
    type=click.Path(dir_okay=False, exists=True),
    help="A jinja2 template instead of the shipped one (markdown and text).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, allow_dash=True),
    help="Write the report to this file (atomically) instead of stdout.",
)
def report(
    old: str,
    new: str,
    fmt: str,
    fail_on: str | None,
    template_file: str | None,
    output: str | None,
    **opts: Any,
) -> None:
    """Compare two renders of the same manifests (OLD: e.g. the target branch, NEW: the
    merge request; files, directories or -) and report which workloads will restart and
    why, which use changed configuration but will not restart, changed objects nobody
    uses, and findings (immutable objects that changed are errors).

    Secrets are described by key names only: never a value, never a hash of one."""
    from cmhash import report as rep
    from cmhash.settings import layered

    raise SystemExit(rep.run(old, new, layered(opts), fmt, template_file, fail_on, output))


@cli.command("gitlab-note")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option(
    "--token-env",
    default="CMHASH_GITLAB_TOKEN",
    show_default=True,
    metavar="VAR",
    help="Environment variable holding a GitLab token with the api scope.",
)
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
    from cmhash.integrations import helm_plugin_dir as where

    click.echo(where())


@cli.command("install-kustomize-plugin")
@click.option(
    "--plugin-home",
    type=click.Path(file_okay=False),
    help="[default: $KUSTOMIZE_PLUGIN_HOME, else $XDG_CONFIG_HOME/kustomize/plugin, "
    "else ~/.config/kustomize/plugin]",
)
def install_kustomize_plugin(plugin_home: str | None) -> None:
    """Install the kustomize legacy exec transformer (kind CmhashTransformer).

    Then list a CmhashTransformer config under `transformers:` and run
    `kubectl kustomize --enable-alpha-plugins DIR`."""
    from cmhash.integrations import install_kustomize_plugin as install

    click.echo(install(plugin_home))


def _outcome(args: list[str]) -> int:
    """Run the command line; every outcome as an exit code, never a traceback for input."""
    from cmhash import signals

    try:
        cli.main(args=args, prog_name="cmhash", standalone_mode=False)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else EXIT_INPUT
    except click.exceptions.Abort:
        err("cmhash: interrupted")
        return EXIT_INTERRUPTED
    except click.ClickException as exc:
        err(f"cmhash: {exc.format_message()}")
        return exc.exit_code if exc.exit_code else EXIT_INPUT
    except CmhashError as exc:
        err(f"cmhash: {exc}")
        return exc.exit_code
    except KeyboardInterrupt:
        err("cmhash: interrupted")
        return EXIT_INTERRUPTED
    except signals.Terminated as exc:
        err(f"cmhash: terminated ({exc.name})")
        return 128 + exc.signum
    except (BrokenPipeError, OutputClosed):
        # the reader went away (cmhash big.yaml | head): stop quietly; later flushes of
        # the closed pipe go to /dev/null instead of raising again at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_PIPE
    except RecursionError:
        err("cmhash: input nested too deeply")
        return EXIT_INPUT
    except Exception as exc:
        _internal_error(exc, verbose="-v" in args or "--verbose" in args)
        return EXIT_INTERNAL
    return EXIT_OK


def _internal_error(exc: Exception, *, verbose: bool) -> None:
    import traceback

    tb = traceback.extract_tb(exc.__traceback__)
    where = f" at {os.path.basename(tb[-1].filename)}:{tb[-1].lineno}" if tb else ""
    err(
        f"cmhash: internal error ({type(exc).__name__}{where}); please report it"
        + ("" if verbose else " (run with --verbose for the traceback)")
    )
    if verbose:
        traceback.print_exc()


def main(argv: Sequence[str] | None = None) -> None:
    """Console entry point: run, log the exit code, exit with it."""
    args = list(sys.argv[1:] if argv is None else argv)
    log("run: cmhash " + " ".join(args))
    code = _outcome(args)
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
