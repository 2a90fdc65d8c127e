"""A stand-in for GitHub's issue-comments REST API (list, create, PATCH update), for
tests: it records every request, checks the bearer token, and pages lists as GitHub
does (per_page, page)."""

from __future__ import annotations

import json
import re
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TOKEN = "ghs_test-token-0123456789abcdef"
BOT = {"login": "github-actions[bot]", "type": "Bot"}  # who the token posts as
PERSON = {"login": "alice", "type": "User"}
LIST = re.compile(r"^/repos/(?P<o>[^/]+)/(?P<r>[^/]+)/issues/(?P<n>\d+)/comments(?:\?.*)?$")
ONE = re.compile(r"^/repos/(?P<o>[^/]+)/(?P<r>[^/]+)/issues/comments/(?P<id>\d+)$")


class FakeGitHub:
    def __init__(self, comments: int = 1, login: str | None = None) -> None:
        self.comments: list[dict[str, Any]] = [
            {"id": 100 + i, "body": f"looks good {i}", "user": dict(PERSON)}
            for i in range(comments)
        ]
        self.requests: list[tuple[str, str]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _reply(self, code: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _handle(self) -> None:
                fake.requests.append((self.command, self.path))
                if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                    self._reply(401, {"message": "Bad credentials"})
                    return
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                listed, one = LIST.match(self.path), ONE.match(self.path)
                if listed and self.command == "GET":
                    q = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
                    per, page = int(q.get("per_page", ["30"])[0]), int(q.get("page", ["1"])[0])
                    self._reply(200, fake.comments[(page - 1) * per : page * per])
                elif self.path == "/user" and self.command == "GET":
                    if login is not None:  # a personal access token: its user
                        self._reply(200, {"login": login, "type": "User"})
                    else:  # the job's GITHUB_TOKEN (an installation token) may not ask
                        self._reply(403, {"message": "Resource not accessible by integration"})
                elif listed and self.command == "POST":
                    user = BOT if login is None else {"login": login, "type": "User"}
                    comment = {"id": 100 + len(fake.comments), "body": body["body"], "user": user}
                    fake.comments.append(comment)
                    self._reply(201, comment)
                elif one and self.command == "PATCH":
                    for comment in fake.comments:
                        if comment["id"] == int(one.group("id")):
                            comment["body"] = body["body"]
                            self._reply(200, comment)
                            return
                    self._reply(404, {"message": "Not Found"})
                else:
                    self._reply(404, {"message": "Not Found"})

            do_GET = do_POST = do_PATCH = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeGitHub:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()

    def env(self, event: str, **extra: str) -> dict[str, str]:
        return {
            "GITHUB_API_URL": self.url,
            "GITHUB_REPOSITORY": "shop/deploy",
            "GITHUB_EVENT_PATH": event,
            "GITHUB_TOKEN": TOKEN,
            **extra,
        }
