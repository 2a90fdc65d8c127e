"""The GitLab merge-request note (``post_note``): read from what a merge-request
pipeline sets (CI_API_V4_URL, CI_PROJECT_ID, CI_MERGE_REQUEST_IID), created or updated
through the notes API (integrations/comments.py). The token's own notes are those whose
author is the user GET /user names (a project access token's bot user)."""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable, Mapping

from cmhash.integrations.comments import (
    NO_KEY,
    Api,
    Key,
    Mine,
    NoteError,
    token,
    upsert,
    whoami,
)
from cmhash.knowledge.defaults import path_get

GITLAB_REQUIRED = ("CI_API_V4_URL", "CI_PROJECT_ID", "CI_MERGE_REQUEST_IID")
GITLAB_MAX_BODY = 1_000_000  # GitLab refuses notes over 1,000,000 characters


def _gitlab_mine(user_url: str) -> Callable[[Api], Mine]:
    """The token's user (GET /user: a project access token's bot user), and its notes
    by author id; a token that may not ask owns no note (a new one is created)."""

    def mine(api: Api) -> Mine:
        me = whoami(api, user_url, "id")
        return lambda item: me is not None and path_get(item, ("author", "id")) == me

    return mine


def post_note(
    text: str, env: Mapping[str, str], token_env: str, key: Key = NO_KEY
) -> tuple[str, int]:
    """Create or update this tool's note on the pipeline's merge request.
    Returns ("created" | "updated", note id)."""
    missing = [v for v in GITLAB_REQUIRED if not env.get(v)]
    if missing:
        raise NoteError(
            f"not a merge-request pipeline: {', '.join(missing)} not set "
            "(run the job with rules: - if: $CI_MERGE_REQUEST_IID)"
        )
    secret = token(
        env, token_env, "a project access token with the api scope, as a masked CI/CD variable"
    )
    project = urllib.parse.quote(env["CI_PROJECT_ID"], safe="")
    base = (
        f"{env['CI_API_V4_URL'].rstrip('/')}/projects/{project}/merge_requests/"
        f"{urllib.parse.quote(env['CI_MERGE_REQUEST_IID'], safe='')}/notes"
    )
    api = Api(
        "GitLab",
        f"{base}?sort=asc",
        lambda note: f"{base}/{note}",
        "PUT",
        {"PRIVATE-TOKEN": secret},
        GITLAB_MAX_BODY,
        "check the token's scope: api",
        _gitlab_mine(f"{env['CI_API_V4_URL'].rstrip('/')}/user"),
    )
    return upsert(api, text, key)
