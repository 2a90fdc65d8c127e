"""``cmhash lock`` (what the cluster holds, as fingerprints, for review in Git) and
``cmhash restart`` (a restart asked for in Git): imported when one of them runs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from cmhash.cli.options import settings_options
from cmhash.errors import EXIT_CHANGED, UsageError

if TYPE_CHECKING:
    from cmhash.read.source import SourceText
    from cmhash.write.annotate import Target
    from cmhash.write.emit import FileResult

LOCK_EXIT_CODES_HELP = """\b
Exit codes:
  0  lock written (or, with --check, unchanged)
  1  --check: the lock would change (nothing written)
  2  bad input or usage: an export kubectl did not write, an
     unreadable file
  3  internal error (a bug: please report it)"""


@click.command(epilog=LOCK_EXIT_CODES_HELP)
@click.argument("exports", nargs=-1, type=click.Path(allow_dash=True))
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, allow_dash=True),
    help="Write the lock to this file (a regular file atomically; a device or FIFO as a "
    "stream; through a symlink, its target) instead of stdout.",
)
@click.option(
    "--for",
    "manifests",
    multiple=True,
    metavar="MANIFESTS",
    type=click.Path(allow_dash=True),
    help="Keep only the objects these manifests use (files or directories; repeatable): "
    "what each annotated workload uses and the manifests do not define themselves.",
)
@click.option("--check", is_flag=True, help="Write nothing; exit 1 if the lock would change.")
@click.option(
    "--print-kinds",
    is_flag=True,
    help="Print what to export for the --for manifests (kubectl's resource names, "
    "comma-separated, for kubectl get) and exit; reads no export.",
)
@settings_options
def lock(
    exports: tuple[str, ...],
    output: str | None,
    manifests: tuple[str, ...],
    check: bool,
    print_kinds: bool,
    **opts: Any,
) -> None:
    """Write a lock file of what the cluster holds: for every ConfigMap and Secret of the
    EXPORTS (kubectl get ... -o yaml or -o json: a List, or a stream of objects; - for
    stdin) and every Secret an operator writes (Vault Secrets Operator, External Secrets,
    cert-manager, the Secrets Store CSI driver), one fingerprint of its current content,
    never a value. With --lock (or lock: in .cmhash.yaml), a rotation in the store then
    moves exactly the checksums of the workloads that use that object."""
    from cmhash.app.lock import make_lock
    from cmhash.output import err, report_notes, write_stdout
    from cmhash.read.inputs import stream_sources
    from cmhash.settings.layering import layered

    settings = layered(opts, read_lock=False)
    if print_kinds and (not manifests or exports):
        raise UsageError("--print-kinds takes the manifests (--for) and no EXPORTS")
    if not exports and not print_kinds:
        raise UsageError("give the EXPORTS (kubectl get ... -o yaml; - for stdin)")
    if check and not output:
        raise UsageError("--check compares with the lock file: give it with -o FILE")
    if exports.count("-") + manifests.count("-") > 1:
        raise UsageError("only one of EXPORTS and --for can be - (stdin)")

    def read(paths: tuple[str, ...]) -> list[Any]:
        return stream_sources(paths, settings.exclude, settings.max_input_bytes)

    if print_kinds:
        from cmhash.app.lock import needed_resources

        kinds = needed_resources(read(manifests), settings)
        write_stdout(",".join(kinds) + "\n" if kinds else "")
        return
    target = output if output and output != "-" else None
    result = make_lock(
        read(exports),
        exports,
        settings,
        read(manifests) if manifests else None,
        manifests,
        _previous(target),
    )
    report_notes(result.notes, quiet=settings.quiet)
    if not settings.quiet:
        for line in result.warnings:
            err(f"cmhash: warning: {line}")
    if check:
        if _current(target) != result.text:
            err(f"cmhash: {target or 'the lock'} would change")
            raise SystemExit(EXIT_CHANGED)
        return
    if target is None:
        write_stdout(result.text)
        return
    if _current(target) != result.text:
        from cmhash.write.writer import write_new_file

        write_new_file(target, result.text)
        if not settings.quiet:
            err(f"cmhash: wrote {target} ({len(result.entries)} objects)")
    elif not settings.quiet:
        err(f"cmhash: {target} is unchanged ({len(result.entries)} objects)")


def _previous(path: str | None) -> Any:
    """The lock at ``-o``, which this run replaces (None: none, or not a lock)."""
    text = _current(path)
    if path is None or text is None:
        return None
    from cmhash.errors import InputError
    from cmhash.plan.lockfile import parse_lock
    from cmhash.read.source import SourceText

    try:
        return parse_lock(SourceText(path, text))
    except InputError:
        return None  # (replaced as a whole, as before)


def _current(path: str | None) -> str | None:
    from cmhash.write.writer import is_regular

    if path is None or not is_regular(path):  # (a FIFO is not read: it would block)
        return None
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except (OSError, UnicodeDecodeError):
        return None


@click.command(
    epilog="""\b
Exit codes:
  0  written (or it says so already)
  2  bad input or usage: no such object, several, or an edit that
     cannot be made safely (file:line:col)
  3  internal error (a bug: please report it)"""
)
@click.argument("target", metavar="KIND/NAME")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("-n", "--namespace", metavar="NS", help="Its namespace (or none written).")
@click.option("--reason", required=True, help="Why: what the rollout plan shows (one line).")
@click.option("--parser", type=click.Choice(["fast", "exact"]), default="fast", show_default=True)
def restart(
    target: str, paths: tuple[str, ...], namespace: str | None, reason: str, parser: str
) -> None:
    """Ask for a restart in Git: write cmhash.io/restart: "REASON" into the metadata of
    KIND/NAME (a workload, or a ConfigMap or Secret: then every workload that uses it)
    in the files of PATHS, in place, changing nothing else. Its reason enters the
    checksum: a new reason rolls the pods, the same one again changes nothing, and
    cmhash report shows it as the cause."""
    from cmhash.app.pipeline import kind_table
    from cmhash.output import err
    from cmhash.read.inputs import select
    from cmhash.read.stdin import Mode
    from cmhash.settings.values import DEFAULT_MAX_INPUT, Settings
    from cmhash.write import annotate
    from cmhash.write.writer import write_files

    kind, slash, name = target.partition("/")
    if not slash or not kind or not name:
        raise UsageError(f"{target!r}: give KIND/NAME, e.g. deployment/web")
    annotate.check_reason(reason)
    sources = select(
        list(paths),
        mode=Mode.IN_PLACE,
        config_paths=(),
        config_file=None,
        excludes=(),
        max_bytes=DEFAULT_MAX_INPUT,
    ).sources
    found = annotate.find(sources, kind, name, namespace, kind_table(Settings()), parser)
    ns = f" -n {namespace}" if namespace else ""
    if not found:
        raise UsageError(f"no {kind}/{name}{ns} in {', '.join(paths)}")
    places = [f"{t.source.display}:{t.source.position(t.resource.node.start)[0]}" for t in found]
    if len(found) > 1:
        raise UsageError(
            f"{kind}/{name}{ns} is defined {len(found)} times ({', '.join(places)}): give the "
            "file (or -n) of the one to restart"
        )
    one, where = found[0], places[0]
    result = annotate.restart_file(one, reason, parser)
    if result is None:
        err(f"cmhash: {where}: {one.resource.label} asks for this restart already")
        return
    later = _restart_effect(sources, result, one, paths)
    from cmhash.runtime.signals import held

    with held():  # a signal after the write waits for this line, which is then true
        write_files([result], list(paths))
        err(f'cmhash: {where}: {one.resource.label}: cmhash.io/restart: "{reason}"')
    for label in later:
        err(
            f"cmhash: note: {label} restarts nothing running: its next Job starts with "
            "the new template"
        )


def _restart_effect(
    sources: list[SourceText], result: FileResult, one: Target, paths: tuple[str, ...]
) -> list[str]:
    """What the new reason rolls, as a plain run with the configuration would: an
    error (exit 2, nothing written) when every workload that uses the target is left
    alone; a warning when none in PATHS uses it; the CronJobs it moves (returned)."""
    from cmhash.app.restart import restart_effect
    from cmhash.output import err
    from cmhash.read.source import SourceText
    from cmhash.settings.layering import layered

    # (restarts do not depend on the key: a configured secretKeyEnv is not needed here)
    settings = layered({}, read_lock=False, keyless=True)
    src = one.source
    after = [SourceText(s.path, result.text, s.had_bom) if s is src else s for s in sources]
    effect = restart_effect(sources, after, one.resource, settings)
    label = one.resource.label
    if effect.left:
        shown = "; ".join(why if w == label else f"{w}: {why}" for w, why in effect.left[:3])
        more = f"; and {len(effect.left) - 3} more" if len(effect.left) > 3 else ""
        raise src.error(
            f"cmhash.io/restart on {label} restarts nothing: {shown}{more} (nothing written)",
            one.resource.node.start,
        )
    if not effect.rolled:
        err(
            f"cmhash: warning: no workload in {', '.join(paths)} uses {label}: the reason "
            "restarts those that use it where they are rendered with it"
        )
    return effect.later


@click.command(
    epilog="""\b
Exit codes:
  0  opened or updated, or nothing to propose (the lock is current)
  2  bad usage, or the forge refused (the message says why; the
     token is never shown)
  3  internal error (a bug: please report it)"""
)
@click.argument("lock_file", metavar="LOCK", type=click.Path(dir_okay=False, exists=True))
@click.option("--forge", type=click.Choice(["gitlab", "github"]), required=True)
@click.option(
    "--description",
    "description_file",
    metavar="FILE",
    type=click.Path(dir_okay=False, exists=True),
    required=True,
    help="The request's description: the rollout plan (cmhash report -o FILE).",
)
@click.option(
    "--path",
    help="The lock's path in the repository [default: LOCK's, relative to the "
    "repository: CI_PROJECT_DIR, GITHUB_WORKSPACE, else the current directory].",
)
@click.option("--branch", default="cmhash/lock", show_default=True, help="The request's branch.")
@click.option("--target", help="The branch to merge into [default: the repository's default].")
@click.option("--title", default="cmhash: secrets rotated in the store", show_default=True)
@click.option(
    "--token-env",
    metavar="VAR",
    help="The variable holding the token [default: CMHASH_GITLAB_TOKEN on GitLab, "
    "GITHUB_TOKEN on GitHub].",
)
def lock_request(
    lock_file: str,
    forge: str,
    description_file: str,
    path: str | None,
    branch: str,
    target: str | None,
    title: str,
    token_env: str | None,
) -> None:
    """Propose LOCK (written by cmhash lock) for review: when it differs from the lock on
    the target branch, set BRANCH to the target plus one commit that writes it (none when
    BRANCH holds that already), and open a merge request (GitLab) or pull request
    (GitHub) from it, or update the open one's description with the rollout plan. When
    the lock is current again, the open request is closed as stale. BRANCH is never the
    target, nor a branch with commits cmhash did not write. Through the forge's API: run
    it in the scheduled job of the recipe (ci-templates/), on every run."""
    import os

    from cmhash.integrations import lockforges, lockrequest
    from cmhash.integrations.comments import read_report
    from cmhash.output import err
    from cmhash.plan.lockfile import read_lock
    from cmhash.settings.values import DEFAULT_MAX_INPUT

    read_lock(lock_file, DEFAULT_MAX_INPUT)  # a cmhash lock, or refused: nothing is sent
    content = read_report(lock_file)
    description = read_report(description_file)
    if lockrequest.holds_secret(description):
        raise UsageError(
            f"{description_file}: holds a Kubernetes Secret with data, not a rollout plan: "
            "nothing sent (give the report cmhash report -o FILE wrote)"
        )
    proposal = lockrequest.Proposal(
        lockrequest.repository_path(lock_file, path, os.environ, os.getcwd()),
        content,
        description,
        branch,
        title,
        target,
    )
    if forge == "gitlab":
        said = lockforges.gitlab(proposal, os.environ, token_env or "CMHASH_GITLAB_TOKEN")
    else:
        said = lockforges.github(proposal, os.environ, token_env or "GITHUB_TOKEN")
    err(f"cmhash: {said}")
