"""Stand-ins for the parts of the GitLab and GitHub REST APIs that ``cmhash lock-request``
uses (a file on a branch, a commit or a branch forced to the target plus one commit,
the merge or pull requests of a branch), over a tiny in-memory repository: branches
point at commits, a commit is a dict of files. They check the token as the comment
fakes do (fakegitlab.py, fakegithub.py) and record every request."""

from __future__ import annotations

import base64
import hashlib
import re
import urllib.parse
from collections.abc import Mapping
from typing import Any

from fakegithub import TOKEN as GITHUB_TOKEN
from fakegitlab import TOKEN as GITLAB_TOKEN
from fakeserver import FakeServer, Reply


class Repo:
    def __init__(self, files: dict[str, str], default: str = "main") -> None:
        self.commits: dict[str, dict[str, str]] = {}
        self.branches: dict[str, str] = {}
        self.default = default
        self.branches[default] = self.commit(files)

    def commit(self, files: dict[str, str]) -> str:
        sha = hashlib.sha1(repr(sorted(files.items())).encode()).hexdigest()
        self.commits[sha] = dict(files)
        return sha

    def files(self, branch: str) -> dict[str, str] | None:
        sha = self.branches.get(branch)
        return None if sha is None else self.commits[sha]


def _query(match: re.Match[str]) -> dict[str, str]:
    return {
        k: v[0] for k, v in urllib.parse.parse_qs(urllib.parse.urlsplit(match.string).query).items()
    }


def _blob(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


P = r"^/api/v4/projects/(?P<p>[^/?]+)"


class FakeGitLabRepo(FakeServer):
    path_prefix = "/api/v4"
    unauthorized = (401, {"message": "401 Unauthorized"})
    not_found = (404, {"message": "404 Not Found"})

    def __init__(self, repo: Repo) -> None:
        self.repo = repo
        self.mrs: list[dict[str, Any]] = []
        super().__init__(
            [
                ("GET", re.compile(P + r"/repository/files/(?P<f>[^/?]+)(?:\?.*)?$"), self._file),
                ("POST", re.compile(P + r"/repository/commits$"), self._commit),
                ("GET", re.compile(P + r"/merge_requests(?:\?.*)?$"), self._list),
                ("POST", re.compile(P + r"/merge_requests$"), self._create),
                ("PUT", re.compile(P + r"/merge_requests/(?P<iid>\d+)$"), self._update),
            ]
        )

    def authorized(self, headers: Mapping[str, str]) -> bool:
        return headers.get("PRIVATE-TOKEN") == GITLAB_TOKEN

    def record(self, method: str, path: str, headers: Mapping[str, str]) -> Any:
        return (method, path, dict(headers))

    def _file(self, match: re.Match[str], body: Any) -> Reply:
        files = self.repo.files(_query(match).get("ref", ""))
        path = urllib.parse.unquote(match.group("f"))
        if files is None or path not in files:
            return 404, {"message": "404 File Not Found"}
        return 200, {"file_path": path, "content": base64.b64encode(files[path].encode()).decode()}

    def _commit(self, match: re.Match[str], body: Any) -> Reply:
        branch, start = body["branch"], body.get("start_branch")
        if branch not in self.repo.branches or body.get("force"):
            base = self.repo.files(start or branch)
            if base is None:
                return 400, {
                    "message": "You can only create or edit files when you are on a branch"
                }
        else:
            base = self.repo.files(branch)
        files = dict(base or {})
        for action in body["actions"]:
            exists = action["file_path"] in files
            if (action["action"] == "create") == exists:
                return 400, {
                    "message": f"A file with this name {'already exists' if exists else 'does not exist'}"
                }
            files[action["file_path"]] = action["content"]
        self.repo.branches[branch] = self.repo.commit(files)
        return 201, {"id": self.repo.branches[branch], "message": body["commit_message"]}

    def _list(self, match: re.Match[str], body: Any) -> Reply:
        q = _query(match)
        return 200, [
            mr
            for mr in self.mrs
            if mr["state"] == q.get("state", mr["state"])
            and mr["source_branch"] == q.get("source_branch", mr["source_branch"])
            and mr["target_branch"] == q.get("target_branch", mr["target_branch"])
        ]

    def _create(self, match: re.Match[str], body: Any) -> Reply:
        mr = {"iid": len(self.mrs) + 1, "state": "opened", **body}
        self.mrs.append(mr)
        return 201, mr

    def _update(self, match: re.Match[str], body: Any) -> Reply:
        for mr in self.mrs:
            if mr["iid"] == int(match.group("iid")):
                mr.update(body)
                return 200, mr
        return 404, {"message": "404 Not found"}

    def env(self, **extra: str) -> dict[str, str]:
        return {
            "CI_API_V4_URL": self.url,
            "CI_PROJECT_ID": "42",
            "CI_DEFAULT_BRANCH": self.repo.default,
            "CMHASH_GITLAB_TOKEN": GITLAB_TOKEN,
            **extra,
        }


R = r"^/repos/(?P<o>[^/]+)/(?P<r>[^/?]+)"


class FakeGitHubRepo(FakeServer):
    unauthorized = (401, {"message": "Bad credentials"})

    def __init__(self, repo: Repo) -> None:
        self.repo = repo
        self.pulls: list[dict[str, Any]] = []
        super().__init__(
            [
                ("GET", re.compile(R + r"$"), self._repo),
                ("GET", re.compile(R + r"/contents/(?P<f>[^?]+)(?:\?.*)?$"), self._file),
                ("PUT", re.compile(R + r"/contents/(?P<f>[^?]+)$"), self._put),
                ("GET", re.compile(R + r"/git/refs?/heads/(?P<b>.+)$"), self._ref),
                ("POST", re.compile(R + r"/git/refs$"), self._new_ref),
                ("PATCH", re.compile(R + r"/git/refs/heads/(?P<b>.+)$"), self._force),
                ("GET", re.compile(R + r"/pulls(?:\?.*)?$"), self._list),
                ("POST", re.compile(R + r"/pulls$"), self._create),
                ("PATCH", re.compile(R + r"/pulls/(?P<n>\d+)$"), self._update),
            ]
        )

    def authorized(self, headers: Mapping[str, str]) -> bool:
        return headers.get("Authorization") == f"Bearer {GITHUB_TOKEN}"

    def _repo(self, match: re.Match[str], body: Any) -> Reply:
        return 200, {"default_branch": self.repo.default}

    def _file(self, match: re.Match[str], body: Any) -> Reply:
        files = self.repo.files(_query(match).get("ref", self.repo.default))
        path = urllib.parse.unquote(match.group("f"))
        if files is None or path not in files:
            return 404, {"message": "Not Found"}
        text = files[path]
        return 200, {"content": base64.b64encode(text.encode()).decode(), "sha": _blob(text)}

    def _put(self, match: re.Match[str], body: Any) -> Reply:
        path = urllib.parse.unquote(match.group("f"))
        files = self.repo.files(body["branch"])
        if files is None:
            return 404, {"message": "Branch not found"}
        if (path in files) != ("sha" in body) or (
            path in files and body["sha"] != _blob(files[path])
        ):
            return 409, {"message": "sha does not match"}
        files = {**files, path: base64.b64decode(body["content"]).decode()}
        self.repo.branches[body["branch"]] = self.repo.commit(files)
        return 200, {"commit": {"sha": self.repo.branches[body["branch"]]}}

    def _ref(self, match: re.Match[str], body: Any) -> Reply:
        sha = self.repo.branches.get(urllib.parse.unquote(match.group("b")))
        return (404, {"message": "Not Found"}) if sha is None else (200, {"object": {"sha": sha}})

    def _new_ref(self, match: re.Match[str], body: Any) -> Reply:
        name = body["ref"].removeprefix("refs/heads/")
        if name in self.repo.branches:
            return 422, {"message": "Reference already exists"}
        self.repo.branches[name] = body["sha"]
        return 201, {"ref": body["ref"]}

    def _force(self, match: re.Match[str], body: Any) -> Reply:
        self.repo.branches[urllib.parse.unquote(match.group("b"))] = body["sha"]
        return 200, {}

    def _list(self, match: re.Match[str], body: Any) -> Reply:
        q = _query(match)
        return 200, [
            p
            for p in self.pulls
            if p["state"] == q.get("state", p["state"])
            and f"{match.group('o')}:{p['head']}" == q.get("head")
            and p["base"] == q.get("base", p["base"])
        ]

    def _create(self, match: re.Match[str], body: Any) -> Reply:
        pull = {"number": len(self.pulls) + 1, "state": "open", **body}
        self.pulls.append(pull)
        return 201, pull

    def _update(self, match: re.Match[str], body: Any) -> Reply:
        for p in self.pulls:
            if p["number"] == int(match.group("n")):
                p.update(body)
                return 200, p
        return 404, {"message": "Not Found"}

    def env(self, **extra: str) -> dict[str, str]:
        return {
            "GITHUB_API_URL": self.url,
            "GITHUB_REPOSITORY": "shop/deploy",
            "GITHUB_TOKEN": GITHUB_TOKEN,
            **extra,
        }
