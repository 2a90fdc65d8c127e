"""A stand-in for GitHub's issue-comments REST API (list, create, PATCH update), for
tests: it records every request, checks the bearer token, and pages lists as GitHub
does (per_page, page). GET /user answers for a personal token only (403 for an
installation token, as GitHub does); GraphQL's ``viewer`` answers for both: the
installation's bot (``github-actions[bot]`` for the job's GITHUB_TOKEN, an App's
``<slug>[bot]``)."""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Mapping
from typing import Any

from fakeserver import FakeServer, Reply

TOKEN = "ghs_test-token-0123456789abcdef"
LIST = re.compile(r"^/repos/(?P<o>[^/]+)/(?P<r>[^/]+)/issues/(?P<n>\d+)/comments(?:\?.*)?$")
ONE = re.compile(r"^/repos/(?P<o>[^/]+)/(?P<r>[^/]+)/issues/comments/(?P<id>\d+)$")
USER = re.compile(r"^/user$")
GRAPHQL = re.compile(r"^/graphql$")
BOT = {"login": "github-actions[bot]", "type": "Bot"}  # who the job's token posts as
PERSON = {"login": "alice", "type": "User"}
RENOVATE = {"login": "renovate[bot]", "type": "Bot"}


class FakeGitHub(FakeServer):
    unauthorized = (401, {"message": "Bad credentials"})

    def __init__(
        self, comments: int = 1, login: str | None = None, bot: str | None = BOT["login"]
    ) -> None:
        self.comments: list[dict[str, Any]] = [
            {"id": 100 + i, "body": f"looks good {i}", "user": dict(PERSON)}
            for i in range(comments)
        ]
        self.login = login  # a personal access token's user; None: an installation token
        self.bot = bot  # the installation's bot (None: GraphQL refuses too)
        super().__init__(
            [
                ("GET", LIST, self._list),
                ("POST", LIST, self._create),
                ("PATCH", ONE, self._update),
                ("GET", USER, self._user),
                ("POST", GRAPHQL, self._graphql),
            ]
        )

    def authorized(self, headers: Mapping[str, str]) -> bool:
        return headers.get("Authorization") == f"Bearer {TOKEN}"

    def _list(self, match: re.Match[str], body: Any) -> Reply:
        q = urllib.parse.parse_qs(urllib.parse.urlsplit(match.string).query)
        per, page = int(q.get("per_page", ["30"])[0]), int(q.get("page", ["1"])[0])
        return 200, self.comments[(page - 1) * per : page * per]

    def _user(self, match: re.Match[str], body: Any) -> Reply:
        if self.login is None:  # an installation token may not ask who it is
            return 403, {"message": "Resource not accessible by integration"}
        return 200, {"login": self.login, "type": "User"}

    def _graphql(self, match: re.Match[str], body: Any) -> Reply:
        if body.get("query", "").split() != ["query", "{", "viewer", "{", "login", "}", "}"]:
            return 400, {"message": "Problems parsing JSON"}
        who = self.login or self.bot
        if who is None:
            return 403, {"message": "Resource not accessible by integration"}
        return 200, {"data": {"viewer": {"login": who}}}

    def _create(self, match: re.Match[str], body: Any) -> Reply:
        user = (
            {"login": self.bot or BOT["login"], "type": "Bot"}
            if self.login is None
            else {"login": self.login, "type": "User"}
        )
        comment = {"id": 100 + len(self.comments), "body": body["body"], "user": user}
        self.comments.append(comment)
        return 201, comment

    def _update(self, match: re.Match[str], body: Any) -> Reply:
        return self.update(self.comments, match, body) or self.not_found

    def env(self, event: str, **extra: str) -> dict[str, str]:
        return {
            "GITHUB_API_URL": self.url,
            "GITHUB_REPOSITORY": "shop/deploy",
            "GITHUB_EVENT_PATH": event,
            "GITHUB_TOKEN": TOKEN,
            **extra,
        }
