"""A stand-in for the GitLab notes API (list, create, update), for tests: it records
every request and checks the token."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from fakeserver import FakeServer, Reply

TOKEN = "glpat-test-token-0123456789"
NOTES = re.compile(
    r"^/api/v4/projects/(?P<p>[^/]+)/merge_requests/(?P<mr>\d+)/notes"
    r"(?:/(?P<id>\d+))?(?:\?.*)?$"
)
ONE = re.compile(
    r"^/api/v4/projects/(?P<p>[^/]+)/merge_requests/(?P<mr>\d+)/notes/(?P<id>\d+)(?:\?.*)?$"
)
USER = re.compile(r"^/api/v4/user$")
BOT = {"id": 99, "username": "project_42_bot_cmhash"}  # who the token posts as


class FakeGitLab(FakeServer):
    path_prefix = "/api/v4"
    unauthorized = (401, {"message": "401 Unauthorized"})
    not_found = (404, {"message": "404 Not Found"})
    wrong_method = (405, {"message": "405"})

    def __init__(self) -> None:
        self.notes: list[dict[str, Any]] = [{"id": 1, "body": "LGTM", "author": {"id": 1}}]
        super().__init__(
            [
                ("GET", NOTES, self._list),
                ("POST", NOTES, self._create),
                ("PUT", ONE, self._update),
                ("GET", USER, self._user),  # a project access token's bot user
            ]
        )

    def authorized(self, headers: Mapping[str, str]) -> bool:
        return headers.get("PRIVATE-TOKEN") == TOKEN

    def record(self, method: str, path: str, headers: Mapping[str, str]) -> Any:
        return (method, path, dict(headers))

    def _list(self, match: re.Match[str], body: Any) -> Reply:
        return 200, self.notes

    def _user(self, match: re.Match[str], body: Any) -> Reply:
        return 200, BOT

    def _create(self, match: re.Match[str], body: Any) -> Reply:
        note = {"id": len(self.notes) + 1, "body": body["body"], "author": BOT}
        self.notes.append(note)
        return 201, note

    def _update(self, match: re.Match[str], body: Any) -> Reply:
        return self.update(self.notes, match, body) or (404, {"message": "404 Not found"})

    def env(self, **extra: str) -> dict[str, str]:
        return {
            "CI_API_V4_URL": self.url,
            "CI_PROJECT_ID": "42",
            "CI_MERGE_REQUEST_IID": "7",
            "CMHASH_GITLAB_TOKEN": TOKEN,
            **extra,
        }
