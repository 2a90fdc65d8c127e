"""The merge-request commands: ``cmhash ci-report`` (the job of the GitLab template
and the GitHub action) and the comment it creates or updates (``cmhash gitlab-note``,
``cmhash github-comment``)."""

from __future__ import annotations

from typing import Any

import click

from cmhash.cli.options import comment_options, settings_options, verdict_options
from cmhash.output import err


@click.command(
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


@click.command("gitlab-note")
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
def github_comment(file: str, token_env: str, pr: int | None) -> None:
    """Post FILE (a Markdown report) as a comment on the pull request, or update the
    comment an earlier run posted. Reads GITHUB_API_URL, GITHUB_REPOSITORY and the
    pull request from GITHUB_EVENT_PATH, as GitHub Actions sets them."""
    from cmhash.integrations.github import post_from_environment

    how, comment = post_from_environment(file, token_env, pr)
    err(f"{how} pull-request comment {comment}")
