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
    """Branches point at commits; a commit is its files, its parent and its message."""

    def __init__(self, files: dict[str, str], default: str = "main") -> None:
        self.commits: dict[str, dict[str, str]] = {}
        self.parents: dict[str, str | None] = {}
        self.messages: dict[str, str] = {}
        self.branches: dict[str, str] = {}
        self.default = default
        self.branches[default] = self.commit(files)

    def commit(self, files: dict[str, str], parent: str | None = None, message: str = "") -> str:
        sha = hashlib.sha1(repr((sorted(files.items()), parent, message)).encode()).hexdigest()
        self.commits[sha] = dict(files)
        self.parents[sha] = parent
        self.messages[sha] = message
        return sha

    def sha(self, ref: str) -> str | None:
        return self.branches.get(ref) or (ref if ref in self.commits else None)

    def files(self, ref: str) -> dict[str, str] | None:
        sha = self.sha(ref)
        return None if sha is None else self.commits[sha]

    def chain(self, sha: str | None) -> list[str]:
        out = []
        while sha is not None:
            out.append(sha)
            sha = self.parents[sha]
        return out

    def compare(self, base: str, head: str) -> tuple[list[str], set[str]]:
        """The commits of ``head`` on top of the merge base (newest first), and the paths
        they change."""
        ancestors = set(self.chain(self.sha(base)))
        ahead = []
        for sha in self.chain(self.sha(head)):
            if sha in ancestors:
                break
            ahead.append(sha)
        start = self.commits[self.parents[ahead[-1]]] if ahead and self.parents[ahead[-1]] else {}
        end = self.commits[ahead[0]] if ahead else start
        changed = {k for k in set(start) | set(end) if start.get(k) != end.get(k)}
        return ahead, changed


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
                ("GET", re.compile(P + r"/repository/branches/(?P<b>[^/?]+)$"), self._branch),
                ("GET", re.compile(P + r"/repository/compare\?.*$"), self._compare),
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
            parent = self.repo.branches.get(start or branch)
            if parent is None:
                return 400, {
                    "message": "You can only create or edit files when you are on a branch"
                }
        else:
            parent = self.repo.branches[branch]
        files = dict(self.repo.commits[parent])
        for action in body["actions"]:
            exists = action["file_path"] in files
            if (action["action"] == "create") == exists:
                return 400, {
                    "message": f"A file with this name {'already exists' if exists else 'does not exist'}"
                }
            files[action["file_path"]] = action["content"]
        sha = self.repo.commit(files, parent, body["commit_message"])
        self.repo.branches[branch] = sha
        return 201, {"id": sha, "message": body["commit_message"]}

    def _branch(self, match: re.Match[str], body: Any) -> Reply:
        sha = self.repo.branches.get(urllib.parse.unquote(match.group("b")))
        if sha is None:
            return 404, {"message": "404 Branch Not Found"}
        return 200, {
            "commit": {"id": sha, "parent_ids": [p for p in [self.repo.parents[sha]] if p]}
        }

    def _compare(self, match: re.Match[str], body: Any) -> Reply:
        q = _query(match)
        ahead, changed = self.repo.compare(q["from"], q["to"])
        commits = [
            {
                "id": c,
                "message": self.repo.messages[c],
                "parent_ids": [p for p in [self.repo.parents[c]] if p],
            }
            for c in reversed(ahead)
        ]
        return 200, {"commits": commits, "diffs": [{"old_path": f, "new_path": f} for f in changed]}

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
                if body.pop("state_event", None) == "close":
                    mr["state"] = "closed"
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
        self.trees: dict[str, dict[str, str]] = {}
        super().__init__(
            [
                ("GET", re.compile(R + r"$"), self._repo),
                ("GET", re.compile(R + r"/contents/(?P<f>[^?]+)(?:\?.*)?$"), self._file),
                ("PUT", re.compile(R + r"/contents/(?P<f>[^?]+)$"), self._put),
                ("GET", re.compile(R + r"/git/refs?/heads/(?P<b>.+)$"), self._ref),
                ("POST", re.compile(R + r"/git/refs$"), self._new_ref),
                ("PATCH", re.compile(R + r"/git/refs/heads/(?P<b>.+)$"), self._force),
                ("GET", re.compile(R + r"/git/commits/(?P<c>[0-9a-f]+)$"), self._get_commit),
                ("POST", re.compile(R + r"/git/trees$"), self._tree),
                ("POST", re.compile(R + r"/git/commits$"), self._new_commit),
                ("GET", re.compile(R + r"/compare/(?P<a>.+)\.\.\.(?P<b>.+)$"), self._compare),
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
        parent = self.repo.branches[body["branch"]]
        self.repo.branches[body["branch"]] = self.repo.commit(files, parent, body["message"])
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
        branch = urllib.parse.unquote(match.group("b"))
        self.repo.branches[branch] = body["sha"]
        for pull in self.pulls:  # a head the base holds: GitHub marks the pull request merged
            base = self.repo.branches.get(pull["base"])
            mine = pull["head"] == branch and pull["state"] == "open"
            if mine and body["sha"] in self.repo.chain(base):
                pull.update(state="closed", merged=True)
        return 200, {}

    def _get_commit(self, match: re.Match[str], body: Any) -> Reply:
        sha = match.group("c")
        if sha not in self.repo.commits:
            return 404, {"message": "Not Found"}
        files = self.repo.commits[sha]
        tree = hashlib.sha1(repr(sorted(files.items())).encode()).hexdigest()
        self.trees[tree] = files
        return 200, {"sha": sha, "tree": {"sha": tree}}

    def _tree(self, match: re.Match[str], body: Any) -> Reply:
        files = dict(self.trees[body["base_tree"]])
        for entry in body["tree"]:
            assert entry["mode"] == "100644" and entry["type"] == "blob"
            files[entry["path"]] = entry["content"]
        tree = hashlib.sha1(repr(sorted(files.items())).encode()).hexdigest()
        self.trees[tree] = files
        return 201, {"sha": tree}

    def _new_commit(self, match: re.Match[str], body: Any) -> Reply:
        (parent,) = body["parents"]
        sha = self.repo.commit(self.trees[body["tree"]], parent, body["message"])
        return 201, {"sha": sha}

    def _compare(self, match: re.Match[str], body: Any) -> Reply:
        a, b = (urllib.parse.unquote(match.group(x)) for x in "ab")
        if self.repo.sha(a) is None or self.repo.sha(b) is None:
            return 404, {"message": "Not Found"}
        ahead, changed = self.repo.compare(a, b)
        commits = [
            {
                "sha": c,
                "commit": {"message": self.repo.messages[c]},
                "parents": [{"sha": p} for p in [self.repo.parents[c]] if p],
            }
            for c in reversed(ahead)
        ]
        files = [{"filename": f} for f in sorted(changed)]
        return 200, {"ahead_by": len(ahead), "commits": commits, "files": files}

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
