"""The GitHub pull-request comment (``post_comment``): read from what GitHub Actions sets
(GITHUB_API_URL, GITHUB_REPOSITORY, and the pull request's number from the event in
GITHUB_EVENT_PATH unless given), created or updated through the issue-comments REST API
(integrations/comments.py). The token's own comments are those of the login GET /user
names (a personal token); an installation token may not ask (403: the job's
GITHUB_TOKEN, an App's token), then GraphQL's ``viewer`` names it (``github-actions[bot]``,
``<slug>[bot]``: GET /app needs the App's JWT, never an installation token); else the
job's own bot, ``github-actions[bot]``. Never any bot: another tool's comment (renovate's)
may carry the marker too."""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Callable, Mapping
from typing import Any

from cmhash.integrations.comments import (
    NO_KEY,
    Api,
    Key,
    Mine,
    NoteError,
    request,
    token,
    upsert,
    whoami,
)
from cmhash.knowledge.defaults import path_get

# GitHub's REST API: issue comments (a pull request is an issue for comments)
# https://docs.github.com/en/rest/issues/comments (list, create, update: PATCH)
GITHUB_MAX_BODY = 65_536  # GitHub refuses comment bodies over 65,536 characters
GITHUB_API_VERSION = "2022-11-28"


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


ACTIONS_BOT = "github-actions[bot]"  # who the job's GITHUB_TOKEN posts as
VIEWER = "query { viewer { login } }"


def _viewer(api: Api, graphql_url: str) -> Any:
    """The token's login by GraphQL (an installation token may ask: its App's
    ``<slug>[bot]``), or None."""
    try:
        reply = request(api, "POST", graphql_url, {"query": VIEWER})
    except NoteError:
        return None
    return path_get(reply, ("data", "viewer", "login"))


def _github_mine(user_url: str, graphql_url: str) -> Callable[[Api], Mine]:
    """The token's login, asked as the module docstring says, and its comments by it."""

    def mine(api: Api) -> Mine:
        login = whoami(api, user_url, "login")
        if not (isinstance(login, str) and login):
            login = _viewer(api, graphql_url)
        if not (isinstance(login, str) and login):
            login = ACTIONS_BOT
        return lambda item: path_get(item, ("user", "login")) == login

    return mine


def graphql_url(env: Mapping[str, str], api_url: str) -> str:
    """GITHUB_GRAPHQL_URL (Actions sets it), else the REST URL's: ``/graphql`` on
    github.com, ``/api/graphql`` beside a GitHub Enterprise Server's ``/api/v3``."""
    given = env.get("GITHUB_GRAPHQL_URL", "").strip()
    if given:
        return given
    if api_url.endswith("/api/v3"):
        return api_url.removesuffix("/v3") + "/graphql"
    return f"{api_url}/graphql"


def post_comment(
    text: str, env: Mapping[str, str], token_env: str, pr: int | None = None, key: Key = NO_KEY
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
            "X-GitHub-Api-Version": GITHUB_API_VERSION,
        },
        GITHUB_MAX_BODY,
        "the token needs permissions: pull-requests: write",
        _github_mine(f"{api_url}/user", graphql_url(env, api_url)),
    )
    return upsert(api, text, key)
