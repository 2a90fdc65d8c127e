"""The forges' calls for ``cmhash lock-request`` (integrations/lockrequest.py decides
what to do with them): GitLab and GitHub REST APIs, standard library only, the token in
a request header only."""

from __future__ import annotations

import base64
import urllib.parse
from collections.abc import Mapping
from typing import Any

from cmhash.integrations.comments import Api, NoteError, request, token
from cmhash.integrations.github import GITHUB_API_VERSION, GITHUB_MAX_BODY
from cmhash.integrations.lockrequest import MARK, Commit, Proposal, propose


def _api(name: str, headers: Mapping[str, str], hint: str) -> Api:
    """An Api for ``request`` (only its name, headers and hint are used here)."""
    return Api(name, "", lambda _: "", "", headers, 0, hint)


def _get(api: Api, url: str) -> Any:
    """GET, None for a 404 (a file or branch that is not there yet)."""
    try:
        return request(api, "GET", url)
    except NoteError as exc:
        if "HTTP 404" in exc.message:
            return None
        raise


def _compared(got: Any, name: str) -> dict[str, Any]:
    if not isinstance(got, dict):
        raise NoteError(f"{name} API: the comparison of the branches is not a JSON object")
    return got


def _q(text: str) -> str:
    return urllib.parse.quote(text, safe="")


def _decoded(reply: Any) -> str | None:
    return base64.b64decode(reply["content"]).decode() if isinstance(reply, dict) else None


def _message(p: Proposal) -> str:
    return f"{p.title}\n\n{MARK}"


# -- GitLab: https://docs.gitlab.com/api/repository_files/ (a file at a ref),
# /api/branches/ (a branch's commit), /api/repositories/#compare-branches-tags-or-commits
# (the commits on top of the merge base, and the paths they change), /api/commits/
# (create a commit with actions; start_branch and force recreate the branch from the
# target), /api/merge_requests/ (list by source and target branch, create, update,
# state_event: close)

GITLAB_MAX_DESCRIPTION = 1_000_000


class GitLab:
    kind, sign = "merge request", "!"

    def __init__(self, api: Api, base: str, p: Proposal, target: str) -> None:
        self.api, self.base, self.p, self.target = api, base, p, target

    def head(self, branch: str) -> str | None:
        got = _get(self.api, f"{self.base}/repository/branches/{_q(branch)}")
        return str(got["commit"]["id"]) if isinstance(got, dict) else None

    def lock_at(self, ref: str) -> str | None:
        url = f"{self.base}/repository/files/{_q(self.p.path)}?ref={_q(ref)}"
        return _decoded(_get(self.api, url))

    def ahead(self, target: str, branch: str) -> tuple[list[Commit], set[str]]:
        query = urllib.parse.urlencode({"from": target, "to": branch})
        got = _compared(
            request(self.api, "GET", f"{self.base}/repository/compare?{query}"), "GitLab"
        )
        commits = [
            Commit(str(c.get("message", "")), list(c.get("parent_ids") or []))
            for c in got.get("commits") or []
        ]
        paths = {p for d in got.get("diffs") or [] for p in (d["old_path"], d["new_path"])}
        return commits, paths

    def push(self, target: str, target_sha: str, exists: bool, created: bool) -> None:
        action = {"file_path": self.p.path, "content": self.p.content}
        body = {
            "branch": self.p.branch,
            "start_branch": target,
            "force": True,  # the branch is the target plus this one commit
            "commit_message": _message(self.p),
            "actions": [{"action": "create" if created else "update", **action}],
        }
        request(self.api, "POST", f"{self.base}/repository/commits", body)

    def find(self) -> tuple[int, str] | None:
        query = urllib.parse.urlencode(
            {"state": "opened", "source_branch": self.p.branch, "target_branch": self.target}
        )
        found = request(self.api, "GET", f"{self.base}/merge_requests?{query}")
        if isinstance(found, list) and found and isinstance(found[0], dict):
            return int(found[0]["iid"]), str(found[0].get("description") or "")
        return None

    def describe(self, number: int, text: str) -> None:
        url = f"{self.base}/merge_requests/{number}"
        request(self.api, "PUT", url, {"description": text})

    def open(self, text: str) -> int:
        made = request(
            self.api,
            "POST",
            f"{self.base}/merge_requests",
            {
                "source_branch": self.p.branch,
                "target_branch": self.target,
                "title": self.p.title,
                "description": text,
                "remove_source_branch": True,
            },
        )
        return int(made["iid"]) if isinstance(made, dict) else 0

    def close(self, number: int, text: str) -> None:
        url = f"{self.base}/merge_requests/{number}"
        request(self.api, "PUT", url, {"state_event": "close", "description": text})


def gitlab(p: Proposal, env: Mapping[str, str], token_env: str) -> str:
    missing = [v for v in ("CI_API_V4_URL", "CI_PROJECT_ID") if not env.get(v)]
    if missing:
        raise NoteError(f"not a GitLab CI job: {', '.join(missing)} not set")
    target = p.target or env.get("CI_DEFAULT_BRANCH") or ""
    if not target:
        raise NoteError("no target branch: set --target or CI_DEFAULT_BRANCH")
    secret = token(env, token_env, "a project access token with the api scope (Developer role)")
    api = _api("GitLab", {"PRIVATE-TOKEN": secret}, "check the token's scope: api")
    base = f"{env['CI_API_V4_URL'].rstrip('/')}/projects/{_q(env['CI_PROJECT_ID'])}"
    return propose(GitLab(api, base, p, target), p, target, GITLAB_MAX_DESCRIPTION)


# -- GitHub: https://docs.github.com/en/rest/repos/contents (a file at a ref),
# /git/refs (a branch's commit; create one, force it to a commit), /commits#compare-two-
# commits (the commits on top of the merge base, and the files they change),
# /git/trees, /git/commits (the lock's commit, built on the target's before any branch
# moves), /pulls (list by head and base, create, update, state: closed)


class GitHub:
    kind, sign = "pull request", "#"

    def __init__(self, api: Api, base: str, p: Proposal, target: str, owner: str) -> None:
        self.api, self.base, self.p, self.target, self.owner = api, base, p, target, owner

    def head(self, branch: str) -> str | None:
        got = _get(self.api, f"{self.base}/git/ref/heads/{urllib.parse.quote(branch)}")
        return str(got["object"]["sha"]) if isinstance(got, dict) else None

    def lock_at(self, ref: str) -> str | None:
        url = f"{self.base}/contents/{urllib.parse.quote(self.p.path)}?ref={_q(ref)}"
        return _decoded(_get(self.api, url))

    def ahead(self, target: str, branch: str) -> tuple[list[Commit], set[str]]:
        spec = f"{urllib.parse.quote(target)}...{urllib.parse.quote(branch)}"
        got = _compared(request(self.api, "GET", f"{self.base}/compare/{spec}"), "GitHub")
        commits = [
            Commit(str(c["commit"]["message"]), [str(x["sha"]) for x in c.get("parents") or []])
            for c in got.get("commits") or []
        ]
        paths = {
            p
            for f in got.get("files") or []
            for p in (f["filename"], f.get("previous_filename"))
            if p
        }
        return commits, paths

    def push(self, target: str, target_sha: str, exists: bool, created: bool) -> None:
        """The commit built on the target's first, then the branch moved to it once: the
        pull request's head is never the target's commit (GitHub would close it as
        merged)."""
        commit = request(self.api, "GET", f"{self.base}/git/commits/{target_sha}")
        entry = {"path": self.p.path, "mode": "100644", "type": "blob", "content": self.p.content}
        tree = request(
            self.api,
            "POST",
            f"{self.base}/git/trees",
            {"base_tree": commit["tree"]["sha"], "tree": [entry]},
        )
        made = request(
            self.api,
            "POST",
            f"{self.base}/git/commits",
            {"message": _message(self.p), "tree": tree["sha"], "parents": [target_sha]},
        )
        if exists:
            url = f"{self.base}/git/refs/heads/{urllib.parse.quote(self.p.branch)}"
            request(self.api, "PATCH", url, {"sha": made["sha"], "force": True})
        else:
            ref = {"ref": f"refs/heads/{self.p.branch}", "sha": made["sha"]}
            request(self.api, "POST", f"{self.base}/git/refs", ref)

    def find(self) -> tuple[int, str] | None:
        query = urllib.parse.urlencode(
            {"state": "open", "head": f"{self.owner}:{self.p.branch}", "base": self.target}
        )
        found = request(self.api, "GET", f"{self.base}/pulls?{query}")
        if isinstance(found, list) and found and isinstance(found[0], dict):
            return int(found[0]["number"]), str(found[0].get("body") or "")
        return None

    def describe(self, number: int, text: str) -> None:
        request(self.api, "PATCH", f"{self.base}/pulls/{number}", {"body": text})

    def open(self, text: str) -> int:
        made = request(
            self.api,
            "POST",
            f"{self.base}/pulls",
            {"title": self.p.title, "head": self.p.branch, "base": self.target, "body": text},
        )
        return int(made["number"]) if isinstance(made, dict) else 0

    def close(self, number: int, text: str) -> None:
        url = f"{self.base}/pulls/{number}"
        request(self.api, "PATCH", url, {"state": "closed", "body": text})


def github(p: Proposal, env: Mapping[str, str], token_env: str) -> str:
    repo = env.get("GITHUB_REPOSITORY", "")
    if repo.count("/") != 1:
        raise NoteError("GITHUB_REPOSITORY is not set to owner/name (not a GitHub Actions run?)")
    secret = token(
        env, token_env, "a token with permissions: contents: write and pull-requests: write"
    )
    api = _api(
        "GitHub",
        {
            "Authorization": f"Bearer {secret}",
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": GITHUB_API_VERSION,
        },
        "the token needs permissions: contents: write and pull-requests: write",
    )
    owner, name = (_q(x) for x in repo.split("/"))
    base = f"{env.get('GITHUB_API_URL', 'https://api.github.com').rstrip('/')}/repos/{owner}/{name}"
    target = p.target or _default_branch(api, base)
    return propose(GitHub(api, base, p, target, repo.split("/")[0]), p, target, GITHUB_MAX_BODY)


def _default_branch(api: Api, base: str) -> str:
    repo = request(api, "GET", base)
    branch = repo.get("default_branch") if isinstance(repo, dict) else None
    if not isinstance(branch, str) or not branch:
        raise NoteError("the repository names no default branch: give --target")
    return branch
