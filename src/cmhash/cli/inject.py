"""``cmhash inject``, the default command: the stream, ``--in-place``, ``--check`` and
``--diff``, a KRM ResourceList on stdin, and ``--keep-versions``. This is the path of
a plain run (the pre-commit hook, the Helm post-renderer): what it imports is pinned by
tests/test_startup.py."""

from __future__ import annotations

from typing import Any

import click

from cmhash.cli.group import EXIT_CODES_HELP
from cmhash.cli.options import common_options
from cmhash.cli.runs import empty_allowed, run_pipeline, select_inputs, warn_if_empty
from cmhash.output import err


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
    from cmhash.read.mode import Mode
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
    if keep_versions is not None and previous is not None:
        from cmhash.app.history import with_history

        result, warning = with_history(result, previous, keep_versions, settings)
        if warning is not None and not settings.quiet:
            err(warning)
    raise SystemExit(deliver(mode, result, inputs.roots, settings))
