"""``cmhash inject``, the default command: the stream, ``--in-place``, ``--check`` and
``--diff``, a KRM ResourceList on stdin, and ``--keep-versions``; and what the commands
that run the pipeline on PATH... share with it (explain, patches): the run's sources
with their notes, the pipeline with the refusal of linked environments, an input
without objects. This is the path of a plain run (the pre-commit hook, the Helm
post-renderer): what it imports is pinned by tests/test_startup.py."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import click

from cmhash.cli.options import EXIT_CODES_HELP, common_options
from cmhash.errors import UsageError
from cmhash.output import err

if TYPE_CHECKING:
    from cmhash.app.result import RunResult
    from cmhash.read.inputs import Inputs
    from cmhash.read.stdin import Mode
    from cmhash.settings.values import Settings


@click.command(epilog=EXIT_CODES_HELP)
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
    from cmhash.read.stdin import Mode
    from cmhash.settings.layering import layered

    mode = Mode.from_flags(in_place=in_place, check=check, diff=show_diff)
    settings = layered(opts)
    inputs = select_inputs(paths, settings, mode)
    # a KRM function's input: one source that names a ResourceList (the substring test
    # krm.detect starts with, here, so that a plain run does not import the integrations)
    one = inputs.sources[0] if len(inputs.sources) == 1 else None
    if mode is Mode.STREAM and one is not None and "ResourceList" in one.text:
        from cmhash.integrations import krm

        resource_list = krm.detect(inputs.sources)
        if resource_list is not None:
            raise SystemExit(krm.run(resource_list, opts))
    if keep_versions is not None or previous is not None:
        from cmhash.app.history import check_usage

        check_usage(keep_versions, previous, mode.name, settings)
        settings = settings.merged(keep_versions=keep_versions)
    result = run_pipeline(inputs, settings, allow_empty=empty_allowed(inputs, settings, mode))
    warn_if_empty(result, inputs, settings)
    if mode is Mode.STREAM and any(k.startswith("KUSTOMIZE_PLUGIN_") for k in os.environ):
        from cmhash.integrations import unshown  # kustomize's exec plugin: warnings unseen

        if any(name in os.environ for name in unshown.EXEC_PLUGIN_ENV):
            result = unshown.escalated(result, unshown.TRANSFORMER)
            if one is not None:
                result = unshown.with_origins(result, one)
    if keep_versions is not None and previous is not None:
        from cmhash.app.history import with_history

        result, warning = with_history(result, previous, keep_versions, settings)
        if warning is not None and not settings.quiet:
            err(warning)
    raise SystemExit(deliver(mode, result, inputs.roots, settings))


def select_inputs(paths: Sequence[str], settings: Settings, mode: Mode) -> Inputs:
    """The sources of a run (inputs.select), with its notes under --verbose."""
    from cmhash.read.inputs import refusal, select

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
    problem = refusal(inputs, mode)  # (a chart source, or no manifest at all)
    if problem is not None:
        raise problem
    return inputs


def _kustomize(inputs: Inputs, mode: Mode, *, quiet: bool) -> Inputs:
    """Kustomize source trees: patches and generator inputs are not objects
    (read/kustomize.py); the pointer at ``kustomize build`` is always shown."""
    if all(s.is_stdin for s in inputs.sources):
        return inputs  # no file: no kustomization to look for (kustomize.apply's answer)
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


def run_pipeline(inputs: Inputs, settings: Settings, **how: Any) -> RunResult:
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
    # an object that several directories define: environments, to tell apart
    if result.config_index is not None and result.config_index.by_directory:
        _refuse_links(inputs)
    return result


def _refuse_links(inputs: Inputs) -> None:
    """A repository whose environments share files through symbolic links: a file is
    read once, by its real path, so the environment a linked copy stands in cannot be
    told (the checksum could be another environment's). Refused, never guessed."""
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


def empty_allowed(inputs: Inputs, settings: Settings, mode: Mode) -> bool:
    """An input without objects is a result, not an error: files left after the walk
    rules in the modes about files, and stdin in the stream mode (a render of nothing:
    empty in, empty out, a warning; ``--strict`` keeps it an error)."""
    from cmhash.read.stdin import Mode

    if mode.on_files and bool(inputs.skipped):
        return True
    return mode is Mode.STREAM and inputs.stdin_only and not settings.strict


def warn_if_empty(result: RunResult, inputs: Inputs, settings: Settings) -> None:
    if result.empty and inputs.stdin_only and not settings.quiet:
        err(
            f"{inputs.sources[0].display}:1:1: warning: no Kubernetes objects in the input "
            "(it is empty or only comments): passed through unchanged; --strict makes "
            "this an error"
        )
