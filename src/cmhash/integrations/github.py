"""Post a report as a pull-request comment on GitHub, or update the one posted before
(the shared logic is comments.py, as for GitLab notes). Reads what GitHub Actions sets:
GITHUB_API_URL, GITHUB_REPOSITORY, and the pull request's number from the event
(GITHUB_EVENT_PATH) unless given. The token is never printed.
"""

from __future__ import annotations

import json
import os
import urllib.parse
from collections.abc import Callable, Mapping

from cmhash.integrations.comments import Api, Mine, NoteError, read_report, token, upsert, whoami
from cmhash.knowledge.defaults import path_get

# GitHub's REST API: issue comments (a pull request is an issue for comments)
# https://docs.github.com/en/rest/issues/comments (list, create, update: PATCH)
MAX_BODY = 65_536  # GitHub refuses comment bodies over 65,536 characters
API_VERSION = "2022-11-28"


def _pr_number(env: Mapping[str, str], pr: int | None) -> int:
    if pr is not None:
        return pr
    path = env.get("GITHUB_EVENT_PATH")
    number = None
    if path:
        try:
            with open(path, encoding="utf-8") as fh:
                event = json.load(fh)
            number = (event.get("pull_request") or {}).get("number") or event.get("number")
        except (OSError, ValueError, AttributeError):
            number = None
    if not isinstance(number, int):
        raise NoteError(
            "not a pull-request run: no pull request number in GITHUB_EVENT_PATH "
            "(run on: pull_request, or pass --pr N)"
        )
    return number


def _mine(user_url: str) -> Callable[[Api], Mine]:
    """The token's login (GET /user), and its comments by it; the job's GITHUB_TOKEN (or
    an app's token) may not ask (403): then its comments are a bot's."""

    def mine(api: Api) -> Mine:
        login = whoami(api, user_url, "login")
        if isinstance(login, str) and login:
            return lambda item: path_get(item, ("user", "login")) == login
        return lambda item: path_get(item, ("user", "type")) == "Bot"

    return mine


def post_comment(
    text: str, env: Mapping[str, str], token_env: str, pr: int | None = None
) -> tuple[str, int]:
    """Create or update this tool's comment on the pull request.
    Returns ("created" | "updated", comment id)."""
    repo = env.get("GITHUB_REPOSITORY", "")
    if repo.count("/") != 1:
        raise NoteError("GITHUB_REPOSITORY is not set to owner/name (not a GitHub Actions run?)")
    secret = token(env, token_env, "the job's GITHUB_TOKEN with permissions: pull-requests: write")
    number = _pr_number(env, pr)
    api_url = env.get("GITHUB_API_URL", "https://api.github.com").rstrip("/")
    owner, name = (urllib.parse.quote(p, safe="") for p in repo.split("/"))
    base = f"{api_url}/repos/{owner}/{name}/issues"
    api = Api(
        "GitHub",
        f"{base}/{number}/comments",
        lambda comment: f"{base}/comments/{comment}",
        "PATCH",
        {
            "Authorization": f"Bearer {secret}",
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": API_VERSION,
        },
        MAX_BODY,
        "the token needs permissions: pull-requests: write",
        _mine(f"{api_url}/user"),
    )
    return upsert(api, text)


def post_from_environment(path: str, token_env: str, pr: int | None = None) -> tuple[str, int]:
    return post_comment(read_report(path), os.environ, token_env, pr)
