"""The commands for other tools: ``cmhash patches`` (kustomize patches, a kustomization
or a Flux HelmRelease kept current, for engines that run no post-renderer), ``cmhash
helm-plugin-dir`` and ``cmhash install-kustomize-plugin``; and the merge-request job,
``cmhash ci-report`` (of the GitLab template and the GitHub action), with the comment it
creates or updates (``cmhash gitlab-note``, ``cmhash github-comment``)."""

from __future__ import annotations

import os
from typing import Any

import click

from cmhash.cli.inject import select_inputs
from cmhash.cli.options import (
    BUDGETS,
    comment_options,
    common_options,
    pop_budget,
    settings_options,
    verdict_options,
)
from cmhash.errors import EXIT_INPUT, UsageError
from cmhash.output import err


@click.command(
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
    default=None,
    help="The kustomization field that lists the patch file (cmhash's entry is moved "
    "there from the other): patches needs kustomize v5 (kubectl 1.27+, Flux, Argo CD); "
    "patchesStrategicMerge also works with kustomize v4. Default: patchesStrategicMerge "
    "when the kustomization already has that field, else patches.",
)
@click.option("--check", is_flag=True, help="Write nothing; exit 1 if what is kept is stale.")
def patches(
    paths: tuple[str, ...],
    kustomization_dir: str | None,
    helmrelease: str | None,
    patch_file: str,
    kustomize_field: str | None,
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
    from cmhash.read.stdin import Mode
    from cmhash.settings.layering import layered

    if kustomization_dir and helmrelease:
        raise UsageError("--kustomization and --helmrelease: give one")
    if check and not (kustomization_dir or helmrelease):
        raise UsageError("--check compares what --kustomization or --helmrelease keeps")
    settings = layered(opts)
    sources = select_inputs(paths, settings, Mode.STREAM).sources
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
            gen.render_of(result),
            settings.secret_key,
            settings.quiet,
        )
    )


@click.command("helm-plugin-dir")
def helm_plugin_dir() -> None:
    """Print the directory of the Helm 4 post-renderer plugin shipped with cmhash.

    \b
    helm plugin install "$(cmhash helm-plugin-dir)"
    export HELM_PLUGINS="$(dirname "$(cmhash helm-plugin-dir)")"   # or, without installing"""
    from cmhash.integrations.install import helm_plugin_dir as where

    click.echo(where())


@click.command("install-kustomize-plugin")
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


@click.command(
    "ci-report",
    epilog="""\b
Exit codes:
  0  report written
  1  --fail-on findings, more restarts than --max-restarts*, more surge than
     --max-surge-cpu / --max-surge-memory, downtime with --no-downtime (all outputs
     still written)
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
@click.option(
    "--comment-key",
    default=None,
    metavar="TEXT",
    help="Which comment is this job's, shown above the report (default: from the "
    "directory it runs in and --render: two jobs of one merge request keep one each).",
)
@click.option("--summary", default=None, help="Append the Markdown to this file.")
@verdict_options("fail_on", *BUDGETS)
def ci_report(
    render: str,
    base: str,
    output_dir: str,
    comment: str,
    token_env: str | None,
    comment_key: str | None,
    summary: str | None,
    fail_on: str | None,
    **opts: Any,
) -> None:
    """The merge-request job of the GitLab template and the GitHub action: render the
    base (at its merge base with HEAD, in a git worktree) and the head with --render,
    run report once, write old.yaml, new.yaml, report.json, report.md and
    codequality.json to --output-dir, print the text report, append the Markdown to
    --summary, and create or update the merge-request comment."""
    from cmhash.integrations.cireport import Job, run
    from cmhash.settings.layering import layered

    job = Job(render, base, output_dir, comment, token_env, summary, comment_key)
    budget, values, nodes = pop_budget(opts)
    raise SystemExit(run(job, layered(opts), fail_on, budget, values, nodes))


@click.command("gitlab-note")
@comment_options(
    "CMHASH_GITLAB_TOKEN", "Environment variable holding a GitLab token with the api scope."
)
def gitlab_note(file: str, token_env: str, comment_key: str | None) -> None:
    """Post FILE (a Markdown report) as a note on the pipeline's merge request, or update
    the note an earlier pipeline posted. Reads CI_API_V4_URL, CI_PROJECT_ID and
    CI_MERGE_REQUEST_IID, as GitLab sets them in merge-request pipelines."""
    from cmhash.integrations.comments import file_key, read_report
    from cmhash.integrations.gitlab import post_note

    key = file_key(file, comment_key, "CI_PROJECT_DIR")
    how, note = post_note(read_report(file), os.environ, token_env, key)
    err(f"{how} merge-request note {note}")


@click.command("github-comment")
@comment_options(
    "GITHUB_TOKEN", "Environment variable holding a token that may write pull-request comments."
)
@click.option(
    "--pr",
    type=click.IntRange(min=1),
    default=None,
    help="The pull request's number (default: from the event in GITHUB_EVENT_PATH).",
)
def github_comment(file: str, token_env: str, comment_key: str | None, pr: int | None) -> None:
    """Post FILE (a Markdown report) as a comment on the pull request, or update the
    comment an earlier run posted. Reads GITHUB_API_URL, GITHUB_REPOSITORY and the
    pull request from GITHUB_EVENT_PATH, as GitHub Actions sets them."""
    from cmhash.integrations.comments import file_key, read_report
    from cmhash.integrations.github import post_comment

    key = file_key(file, comment_key, "GITHUB_WORKSPACE")
    how, comment = post_comment(read_report(file), os.environ, token_env, pr, key)
    err(f"{how} pull-request comment {comment}")
