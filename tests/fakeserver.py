"""A small fake HTTP/JSON server for tests: a routing table of (method, path pattern)
-> handler, served on 127.0.0.1 in a thread. The fake forges (fakegithub.py,
fakegitlab.py) say which routes they answer, how a request is authorized and what
they record of it; the request loop is this one."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar

S = TypeVar("S", bound="FakeServer")
Reply = tuple[int, Any]
# (method, path pattern, handler): the handler takes the path's match and the request's
# JSON body ({} when it has none) and returns (status, JSON body).
Route = tuple[str, re.Pattern[str], Callable[[re.Match[str], Any], Reply]]


class FakeServer:
    """A subclass passes its routes, says who is `authorized`, and may change the
    replies, `record` (what `requests` keeps of each request) and `path_prefix`
    (appended to `url`)."""

    path_prefix = ""
    unauthorized: Reply = (401, {"message": "Unauthorized"})
    not_found: Reply = (404, {"message": "Not Found"})
    # a path some route serves, asked with another method
    wrong_method: Reply = (404, {"message": "Not Found"})

    def __init__(self, routes: list[Route]) -> None:
        self.routes = routes
        self.requests: list[Any] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _reply(self, reply: Reply) -> None:
                code, body = reply
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _handle(self) -> None:
                fake.requests.append(fake.record(self.command, self.path, self.headers))
                if not fake.authorized(self.headers):
                    self._reply(fake.unauthorized)
                    return
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                self._reply(fake.dispatch(self.command, self.path, body))

        # only the methods the routes name are served (others: the stdlib's 501)
        for method in {method for method, _, _ in routes}:
            setattr(Handler, f"do_{method}", Handler._handle)
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}{self.path_prefix}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def dispatch(self, method: str, path: str, body: Any) -> Reply:
        path_known = False
        for route_method, pattern, handler in self.routes:
            match = pattern.match(path)
            if match is None:
                continue
            if route_method == method:
                return handler(match, body)
            path_known = True
        return self.wrong_method if path_known else self.not_found

    @staticmethod
    def update(items: list[dict[str, Any]], match: re.Match[str], body: Any) -> Reply | None:
        """Both forges' update: the item whose id the path names takes the request's
        body; None when there is none."""
        for item in items:
            if item["id"] == int(match.group("id")):
                item["body"] = body["body"]
                return 200, item
        return None

    def authorized(self, headers: Mapping[str, str]) -> bool:
        raise NotImplementedError

    def record(self, method: str, path: str, headers: Mapping[str, str]) -> Any:
        return (method, path)

    def __enter__(self: S) -> S:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
