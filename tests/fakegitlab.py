"""A stand-in for the GitLab notes API (list, create, update), for tests: it records
every request and checks the token."""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TOKEN = "glpat-test-token-0123456789"
BOT = {"id": 99, "username": "project_42_bot_cmhash"}  # who the token posts as
NOTES = re.compile(
    r"^/api/v4/projects/(?P<p>[^/]+)/merge_requests/(?P<mr>\d+)/notes"
    r"(?:/(?P<id>\d+))?(?:\?.*)?$"
)


class FakeGitLab:
    def __init__(self) -> None:
        self.notes: list[dict[str, Any]] = [{"id": 1, "body": "LGTM", "author": {"id": 1}}]
        self.requests: list[tuple[str, str, dict[str, str]]] = []
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
                fake.requests.append((self.command, self.path, dict(self.headers)))
                if self.headers.get("PRIVATE-TOKEN") != TOKEN:
                    self._reply(401, {"message": "401 Unauthorized"})
                    return
                if self.path == "/api/v4/user" and self.command == "GET":
                    self._reply(200, BOT)  # a project access token's bot user
                    return
                m = NOTES.match(self.path)
                if m is None:
                    self._reply(404, {"message": "404 Not Found"})
                    return
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if self.command == "GET":
                    self._reply(200, fake.notes)
                elif self.command == "POST":
                    note = {"id": len(fake.notes) + 1, "body": body["body"], "author": BOT}
                    fake.notes.append(note)
                    self._reply(201, note)
                elif self.command == "PUT" and m.group("id"):
                    for note in fake.notes:
                        if note["id"] == int(m.group("id")):
                            note["body"] = body["body"]
                            self._reply(200, note)
                            return
                    self._reply(404, {"message": "404 Not found"})
                else:
                    self._reply(405, {"message": "405"})

            do_GET = do_POST = do_PUT = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/api/v4"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeGitLab:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()

    def env(self, **extra: str) -> dict[str, str]:
        return {
            "CI_API_V4_URL": self.url,
            "CI_PROJECT_ID": "42",
            "CI_MERGE_REQUEST_IID": "7",
            "CMHASH_GITLAB_TOKEN": TOKEN,
            **extra,
        }
