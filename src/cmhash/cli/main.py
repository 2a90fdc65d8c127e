"""The command line, and only that: click options -> Settings (settings.layered) -> the
pipeline (app.run) -> output and an exit code (deliver.py). The one place that exits."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import click

from cmhash import __version__
from cmhash.cli.options import (
    DefaultGroup,
    comment_options,
    common_options,
    settings_options,
    verdict_options,
)
from cmhash.errors import (
    EXIT_INPUT,
    EXIT_INTERRUPTED,
    EXIT_OK,
    UsageError,
)
from cmhash.output import err, log

if TYPE_CHECKING:
    from cmhash.app.result import RunResult
    from cmhash.read.inputs import Inputs
    from cmhash.read.mode import Mode
    from cmhash.settings.values import Settings

EXIT_CODES_HELP = """\b
Exit codes:
  0  success (nothing to change, or changes written)
  1  changes needed (--check, --diff --check)
  2  bad input or usage: YAML syntax, unreadable file, invalid config,
     unsafe edit, --strict finding
  3  internal error (a bug: please report it)"""


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
    from cmhash.native import cext

    cext.check_off()  # the developer switch, before anything binds the C


def _inputs(paths: Sequence[str], settings: Settings, mode: Mode) -> Inputs:
    """The sources of a run (inputs.select), with its notes under --verbose."""
    from cmhash.read.inputs import select

    inputs = select(
        paths,
        mode=mode,
        config_paths=settings.paths,
        config_file=settings.config_file,
        excludes=settings.exclude,
        max_bytes=settings.max_input_bytes,
        waiting=None if settings.quiet else lambda line: err(f"cmhash: {line}"),
    )
    inputs = _kustomize(inputs, mode, quiet=settings.quiet)
    if settings.verbose and not settings.quiet:
        for line in (*settings.notes, *inputs.notes):
            err(f"cmhash: note: {line}")
    if not inputs.sources and inputs.skipped and not mode.on_files:
        first = inputs.skipped[0]
        raise UsageError(
            f"no Kubernetes manifests in the input: {len(inputs.skipped)} "
            f"path{'s' if len(inputs.skipped) != 1 else ''} skipped (e.g. "
            f"{first.path}: {first.why}; -v lists them)"
        )
    return inputs


def _kustomize(inputs: Inputs, mode: Mode, *, quiet: bool) -> Inputs:
    """Kustomize source trees: patches and generator inputs are not objects
    (read/kustomize.py); the pointer at ``kustomize build`` is always shown."""
    from cmhash.output import report_notes
    from cmhash.read import kustomize
    from cmhash.read.inputs import Skipped

    got = kustomize.apply(inputs.sources, inputs.roots, filter_named=mode.on_files)
    if not quiet:
        for line in got.warnings:
            err(line)
    report_notes(got.pointers, quiet=quiet)
    if not got.left and not got.notes:
        return inputs
    skipped = [Skipped(x.path, x.why) for x in got.left]
    return inputs._replace(
        sources=got.sources,
        skipped=inputs.skipped + skipped,
        notes=inputs.notes + [f"skipped {s.path}: {s.why}" for s in skipped] + got.notes,
    )


def _run(inputs: Inputs, settings: Settings, **how: Any) -> RunResult:
    """``app.run``, then the refusal of linked environments; a tie that a link may have
    made (a linked ConfigMap is read once, where its target is) is that refusal too,
    which says what to do about it."""
    from cmhash.app import pipeline as app
    from cmhash.errors import TieError

    try:
        result = app.run(inputs.sources, settings, **how)
    except TieError:
        _refuse_links(inputs)
        raise
    _linked_environments(inputs, result)
    return result


def _linked_environments(inputs: Inputs, result: RunResult) -> None:
    """A repository whose environments share files through symbolic links: a file is
    read once, by its real path, so the environment a linked copy stands in cannot be
    told (the checksum could be another environment's). Refused, never guessed."""
    index = result.config_index
    if index is None or not index.by_directory:
        return  # no object that several directories define: no environment to tell
    _refuse_links(inputs)


def _refuse_links(inputs: Inputs) -> None:
    linked = [s.path for s in inputs.skipped if "read already" in s.why]
    linked += [
        src.path
        for src in inputs.sources
        if not src.is_stdin and os.path.realpath(src.path) != os.path.abspath(src.path)
    ]
    if linked:
        raise UsageError(
            f"{linked[0]} is reached through a symbolic link while several directories "
            "define the same objects (environments): which environment its objects stand "
            "in cannot be told; run cmhash on each environment's directory, or replace "
            "the link with a copy"
        )


def _empty_allowed(inputs: Inputs, settings: Settings, mode: Mode) -> bool:
    """An input without objects is a result, not an error: files left after the walk
    rules in the modes about files, and stdin in the stream mode (a render of nothing:
    empty in, empty out, a warning; ``--strict`` keeps it an error)."""
    from cmhash.read.mode import Mode

    if mode.on_files and bool(inputs.skipped):
        return True
    return mode is Mode.STREAM and inputs.stdin_only and not settings.strict


def _warn_if_empty(result: RunResult, inputs: Inputs, settings: Settings) -> None:
    if result.empty and inputs.stdin_only and not settings.quiet:
        err(
            f"{inputs.sources[0].display}:1:1: warning: no Kubernetes objects in the input "
            "(it is empty or only comments): passed through unchanged; --strict makes "
            "this an error"
        )


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
@click.option(
    "--keep-versions",
    type=click.IntRange(min=1),
    metavar="N",
    help="With --versioned and --previous: carry up to N-1 earlier versions of each "
    "versioned object from PREV into the output; older ones leave it (and are pruned).",
)
@click.option(
    "--previous",
    metavar="PREV",
    help="The previous cmhash output (the last deployed render), for --keep-versions.",
)
def inject(
    paths: tuple[str, ...],
    in_place: bool,
    check: bool,
    show_diff: bool,
    keep_versions: int | None,
    previous: str | None,
    **opts: Any,
) -> None:
    """Read manifests (files, directories, or - for stdin; none = stdin), inject checksum
    annotations, write the whole stream to stdout (or --in-place / --check / --diff)."""
    from cmhash.deliver import deliver
    from cmhash.read.mode import Mode
    from cmhash.settings.layering import layered

    mode = Mode.from_flags(in_place=in_place, check=check, diff=show_diff)
    settings = layered(opts)
    inputs = _inputs(paths, settings, mode)
    if mode is Mode.STREAM:
        from cmhash.integrations import krm

        resource_list = krm.detect(inputs.sources)
        if resource_list is not None:
            raise SystemExit(krm.run(resource_list, opts))
    if keep_versions is not None or previous is not None:
        from cmhash.app.history import check_usage

        check_usage(keep_versions, previous, mode.name, settings)
        settings = settings.merged(keep_versions=keep_versions)
    result = _run(inputs, settings, allow_empty=_empty_allowed(inputs, settings, mode))
    _warn_if_empty(result, inputs, settings)
    if keep_versions is not None and previous is not None:
        from cmhash.app.history import with_history

        result, warning = with_history(result, previous, keep_versions, settings)
        if warning is not None and not settings.quiet:
            err(warning)
    raise SystemExit(deliver(mode, result, inputs.roots, settings))


EXPLAIN_EXIT_CODES_HELP = """\b
Exit codes:
  0  explanation written (warnings or not)
  2  bad input or usage, or error-level findings (e.g. --strict);
     the explanation is written all the same
  3  internal error (a bug: please report it)"""


@cli.command(epilog=EXPLAIN_EXIT_CODES_HELP)
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
    from cmhash.explain import FORMATS, build
    from cmhash.output import report_notes, write_stdout
    from cmhash.read.mode import Mode
    from cmhash.runtime import lifetime
    from cmhash.settings.layering import layered

    settings = layered(opts)
    inputs = _inputs(paths, settings, Mode.STREAM)
    allow_empty = _empty_allowed(inputs, settings, Mode.STREAM)
    result = _run(inputs, settings, keep_plans=True, allow_empty=allow_empty, output=False)
    _warn_if_empty(result, inputs, settings)
    report_notes(result.notes, quiet=settings.quiet)
    data = build(result, settings.annotation_key)
    lifetime.keep(data)  # (a dict per workload, config and reference: not freed one by one)
    write_stdout(FORMATS[fmt](data))
    if result.has_errors:
        raise SystemExit(EXIT_INPUT)


@cli.command(
    epilog="""\b
Exit codes:
  0  report written (findings or not)
  1  --fail-on: findings of that level or worse; more restarts than
     --max-restarts / --max-restarts-per-namespace
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
@verdict_options("fail_on")
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
@verdict_options("max_restarts", "max_restarts_per_namespace", "no_values")
def report(
    old: str,
    new: str,
    fmt: str,
    fail_on: str | None,
    template_file: str | None,
    output: str | None,
    max_restarts: int | None,
    max_restarts_per_namespace: int | None,
    no_values: bool,
    **opts: Any,
) -> None:
    """Compare two renders of the same manifests (OLD: e.g. the target branch, NEW: the
    merge request; files, directories or -) and report which workloads will restart and
    why, which use changed configuration but will not restart, changed objects nobody
    uses, and findings (immutable objects that changed are errors).

    Secrets are described by key names only: never a value, never a hash of one."""
    from cmhash import report as rep
    from cmhash.settings.layering import layered

    budget = rep.Budget(max_restarts, max_restarts_per_namespace)
    raise SystemExit(
        rep.run(old, new, layered(opts), fmt, template_file, fail_on, output, budget, not no_values)
    )


@cli.command(
    epilog="""\b
Exit codes:
  0  patches written (or current, with --check)
  1  --check: the patch file or the kustomization's entry is stale
  2  bad input or usage
  3  internal error (a bug: please report it)"""
)
@common_options
@click.option(
    "--kustomization",
    "kustomization_dir",
    metavar="DIR",
    type=click.Path(file_okay=False),
    help="Keep DIR/--patch-file and its entry under patches: of DIR's kustomization "
    "current, instead of printing the patches.",
)
@click.option(
    "--helmrelease",
    metavar="FILE",
    type=click.Path(dir_okay=False),
    help="Keep cmhash's entry in FILE's spec.postRenderers (a Flux HelmRelease) current.",
)
@click.option(
    "--patch-file",
    default="cmhash-patches.yaml",
    show_default=True,
    metavar="NAME",
    help="The patch file's name in --kustomization DIR.",
)
@click.option(
    "--kustomize-field",
    type=click.Choice(["patches", "patchesStrategicMerge"]),
    default="patches",
    show_default=True,
    help="The kustomization field that lists the patch file: patches needs kustomize v5 "
    "(kubectl 1.27+, Flux, Argo CD); patchesStrategicMerge also works with kustomize v4.",
)
@click.option("--check", is_flag=True, help="Write nothing; exit 1 if what is kept is stale.")
def patches(
    paths: tuple[str, ...],
    kustomization_dir: str | None,
    helmrelease: str | None,
    patch_file: str,
    kustomize_field: str,
    check: bool,
    **opts: Any,
) -> None:
    """Print, for every workload cmhash would annotate, a kustomize strategic-merge patch
    that sets exactly that annotation: for engines that run no post-renderer (Flux,
    Argo CD Helm applications). Reads a render (files, directories or -) like inject."""
    from cmhash.app import pipeline as app
    from cmhash.deliver import report_run
    from cmhash.integrations import patches as gen
    from cmhash.integrations import patchout
    from cmhash.read.mode import Mode
    from cmhash.settings.layering import layered

    if kustomization_dir and helmrelease:
        raise UsageError("--kustomization and --helmrelease: give one")
    if check and not (kustomization_dir or helmrelease):
        raise UsageError("--check compares what --kustomization or --helmrelease keeps")
    settings = layered(opts)
    sources = _inputs(paths, settings, Mode.STREAM).sources
    result = app.run(sources, settings, keep_plans=True, output=False)
    if not report_run(result, settings):  # the findings, as inject reports them
        raise SystemExit(EXIT_INPUT)
    found = gen.collect(result, settings.annotation_key, hooks=helmrelease is None)
    raise SystemExit(
        patchout.deliver(
            found,
            kustomization_dir,
            helmrelease,
            patch_file,
            check,
            kustomize_field,
            gen.config_names(result),
        )
    )


@cli.command("gitlab-note")
@comment_options(
    "CMHASH_GITLAB_TOKEN", "Environment variable holding a GitLab token with the api scope."
)
def gitlab_note(file: str, token_env: str) -> None:
    """Post FILE (a Markdown report) as a note on the pipeline's merge request, or update
    the note an earlier pipeline posted. Reads CI_API_V4_URL, CI_PROJECT_ID and
    CI_MERGE_REQUEST_IID, as GitLab sets them in merge-request pipelines."""
    from cmhash.integrations.gitlab import post_from_environment

    how, note = post_from_environment(file, token_env)
    err(f"{how} merge-request note {note}")


@cli.command(
    "ci-report",
    epilog="""\b
Exit codes:
  0  report written
  1  --fail-on findings, or more restarts than the budget (all outputs still written)
  2  bad input or usage, a failed render, a comment that could not be posted
  3  internal error (a bug: please report it)""",
)
@settings_options
@click.option("--render", required=True, help="Shell command that writes the manifests to stdout.")
@click.option("--base", required=True, help="What to compare with (its merge base with HEAD).")
@click.option("--output-dir", default="cmhash-report", show_default=True)
@click.option(
    "--comment",
    type=click.Choice(["none", "gitlab", "github"]),
    default="none",
    show_default=True,
    help="Create or update the merge-request comment (in merge-request runs only).",
)
@click.option("--token-env", default=None, metavar="VAR", help="The token's variable.")
@click.option("--summary", default=None, help="Append the Markdown to this file.")
@verdict_options(
    "fail_on", "max_restarts", "max_restarts_per_namespace", "no_values", described=False
)
def ci_report(
    render: str,
    base: str,
    output_dir: str,
    comment: str,
    token_env: str | None,
    summary: str | None,
    fail_on: str | None,
    max_restarts: int | None,
    max_restarts_per_namespace: int | None,
    no_values: bool,
    **opts: Any,
) -> None:
    """The merge-request job of the GitLab template and the GitHub action: render the
    base (at its merge base with HEAD, in a git worktree) and the head with --render,
    run report once, write old.yaml, new.yaml, report.json, report.md and
    codequality.json to --output-dir, print the text report, append the Markdown to
    --summary, and create or update the merge-request comment."""
    from cmhash import report as rep
    from cmhash.integrations.cireport import Job, run
    from cmhash.settings.layering import layered

    job = Job(render, base, output_dir, comment, token_env, summary)
    budget = rep.Budget(max_restarts, max_restarts_per_namespace)
    raise SystemExit(run(job, layered(opts), fail_on, budget, not no_values))


@cli.command("github-comment")
@comment_options(
    "GITHUB_TOKEN", "Environment variable holding a token that may write pull-request comments."
)
@click.option(
    "--pr",
    type=click.IntRange(min=1),
    default=None,
    help="The pull request's number (default: from the event in GITHUB_EVENT_PATH).",
)
def github_comment(file: str, token_env: str, pr: int | None) -> None:
    """Post FILE (a Markdown report) as a comment on the pull request, or update the
    comment an earlier run posted. Reads GITHUB_API_URL, GITHUB_REPOSITORY and the
    pull request from GITHUB_EVENT_PATH, as GitHub Actions sets them."""
    from cmhash.integrations.github import post_from_environment

    how, comment = post_from_environment(file, token_env, pr)
    err(f"{how} pull-request comment {comment}")


@cli.command("helm-plugin-dir")
def helm_plugin_dir() -> None:
    """Print the directory of the Helm 4 post-renderer plugin shipped with cmhash.

    \b
    helm plugin install "$(cmhash helm-plugin-dir)"
    export HELM_PLUGINS="$(dirname "$(cmhash helm-plugin-dir)")"   # or, without installing"""
    from cmhash.integrations.install import helm_plugin_dir as where

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
    from cmhash.integrations.install import install_kustomize_plugin as install

    click.echo(install(plugin_home))


def main(argv: Sequence[str] | None = None) -> None:
    """Console entry point: run, log the exit code, exit with it."""
    args = list(sys.argv[1:] if argv is None else argv)
    log("run: cmhash " + " ".join(args))
    from cmhash.cli.exits import outcome

    code = outcome(cli, args)
    if code:
        log(f"exit {code}")
    from cmhash.runtime import signals

    signals.release()
    sys.exit(code)


def entry() -> None:
    """The console script: ``main``, then leave without tearing the interpreter down.

    Everything is flushed and every file is closed by then; skipping the teardown of a
    few thousand module objects saves about 20 ms, which is most of what a pre-commit
    hook or a Helm post-renderer run of a small chart costs beyond start-up.

    SIGTERM and SIGHUP are handled here, in the process that owns them (not in ``main``,
    which tests call in-process). So is the cyclic garbage collector, off for the whole
    process: what a run builds is acyclic (reference counting frees it) and the process
    ends with the run, while every collection walks all that a big run keeps (explain on
    5,000 apps spent 0.3 s of 2.5 s in collections), and what a run builds is held to
    the end instead of being freed object by object just before the exit (lifetime.py)."""
    import gc

    from cmhash.runtime import early, lifetime, signals

    early.install()  # (already, when started from __main__)
    gc.disable()
    lifetime.hold_until_exit()
    try:
        signals.install()  # from here on, the run's own handling (outcome, held)
        main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else EXIT_INPUT
    except KeyboardInterrupt:  # before outcome() could catch it, or after
        err("cmhash: interrupted")
        code = EXIT_INTERRUPTED
    except signals.Terminated as exc:
        err(f"cmhash: terminated ({exc.name})")
        code = 128 + exc.signum
    else:  # pragma: no cover - main always exits
        code = EXIT_OK
    early.install()  # (main did, unless a signal came between outcome() and its end)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (BrokenPipeError, OSError, ValueError):
            pass
    os._exit(code)
