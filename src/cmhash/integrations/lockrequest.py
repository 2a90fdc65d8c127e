"""``cmhash lock-request``: the lock file proposed for review, on GitLab as a merge
request, on GitHub as a pull request, only when it changed: the scheduled job of the
recipe (ci-templates/gitlab/cmhash-lock.yml, ci-templates/github/cmhash-lock.yml) writes
the lock and the rollout plan (``cmhash report``), and this opens or updates the request.

Through the forge's API only (one token, no git push, nothing but the standard
library, as comments.py; the forges' calls are integrations/lockforges.py): ``propose``
compares the lock on the target branch with the new one. If they differ, the request's
branch becomes the target plus one commit that writes the lock (built first, then the
branch moved once: never through the target's own commit, which GitHub reads as the
pull request merged), and only when that changes what the branch holds: an unchanged
lock is no new commit (no new pipeline, no approvals reset). The request (one per
branch) is opened, or its description updated when the plan changed. When the lock is
current again, the open request is stale: it is closed, saying why. The branch is
cmhash's own or absent: never the target, never a branch with commits cmhash did not
write. The token goes into a request header only, never into a message or URL.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, NamedTuple, Protocol

from cmhash.integrations.comments import NoteError

DEFAULT_BRANCH = "cmhash/lock"
DEFAULT_TITLE = "cmhash: secrets rotated in the store"


class Proposal(NamedTuple):
    path: str  # the lock file's path in the repository
    content: str  # its new text
    description: str  # the rollout plan (Markdown)
    branch: str = DEFAULT_BRANCH
    title: str = DEFAULT_TITLE
    target: str | None = None  # None: the forge's default branch (from the CI environment)


_FENCED = re.compile(r"^(`{3,}|~{3,})[^\n]*\n(.*?)^\1", re.S | re.M)
_KIND_SECRET = re.compile(r"""^[\s-]*["']?kind["']?\s*:\s*["']?Secret["']?\s*,?\s*$""", re.M)
_DATA_KEY = re.compile(r"""^[\s-]*["']?(?:data|stringData)["']?\s*:""", re.M)


def _secret_object(doc: Any, depth: int = 0) -> bool:
    if depth > 50:
        return False
    if isinstance(doc, dict):
        if doc.get("kind") == "Secret" and ("data" in doc or "stringData" in doc):
            return True
        return any(_secret_object(v, depth + 1) for v in doc.values())
    if isinstance(doc, list):
        return any(_secret_object(v, depth + 1) for v in doc)
    return False


def holds_secret(text: str) -> bool:
    """Whether a description holds a Kubernetes Secret with its data (an export given in
    place of the rollout plan, pasted into it, or in one of its code blocks): a
    description is shown to everyone who may see the request. The rollout plan never
    holds one (it names Secrets, never their data)."""
    if _KIND_SECRET.search(text) and _DATA_KEY.search(text):
        return True
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    for chunk in [text, *(m.group(2) for m in _FENCED.finditer(text))]:
        try:
            if any(_secret_object(doc) for doc in yaml.load_all(chunk, Loader=loader)):
                return True
        except (yaml.YAMLError, ValueError, TypeError, RecursionError):
            continue
    return False


def repository_path(lock_file: str, given: str | None, env: Mapping[str, str], cwd: str) -> str:
    """The lock's path in the repository: ``--path`` as given (relative, inside it), else
    LOCK's relative to the checkout (the CI job's directory, else ``cwd``); a path
    outside the repository is refused, never sent as a repository path."""
    import os.path
    import posixpath

    if given is not None:
        rel = posixpath.normpath(given)
        if posixpath.isabs(rel) or rel == ".." or rel.startswith("../"):
            raise NoteError(f"--path {given}: give the lock's path inside the repository")
        return rel
    full = os.path.abspath(os.path.join(cwd, lock_file))
    top = os.path.dirname(full)
    while not os.path.exists(os.path.join(top, ".git")) and os.path.dirname(top) != top:
        top = os.path.dirname(top)
    job = env.get("CI_PROJECT_DIR") or env.get("GITHUB_WORKSPACE")
    found = top if os.path.exists(os.path.join(top, ".git")) else None
    for root in (found, job, cwd):  # the work tree holding it, the job's, the current
        real = os.path.abspath(root) if root else ""
        if real and os.path.commonpath([full, real]) == real:
            return os.path.relpath(full, real).replace(os.sep, "/")
    raise NoteError(
        f"{lock_file} is outside the repository ({os.path.abspath(job or cwd)}): give "
        "its path in the repository with --path"
    )


MARK = "Written by cmhash lock."  # the last line of its commit's message


class Commit(NamedTuple):
    message: str
    parents: list[str]


class Forge(Protocol):
    """One forge's calls (integrations/lockforges.py)."""

    kind: str  # "merge request", "pull request"
    sign: str  # "!", "#"

    def head(self, branch: str) -> str | None: ...  # its commit, None: no such branch
    def lock_at(self, ref: str) -> str | None: ...  # the lock there, None: no such file
    def ahead(self, target: str, branch: str) -> tuple[list[Commit], set[str]]: ...
    def push(self, target: str, target_sha: str, exists: bool, created: bool) -> None: ...
    def find(self) -> tuple[int, str] | None: ...  # the open request: its number, text
    def describe(self, number: int, text: str) -> None: ...
    def open(self, text: str) -> int: ...
    def close(self, number: int, text: str) -> None: ...


def _own(f: Forge, p: Proposal, target: str) -> Commit | None:
    """The branch's one commit on top of the target (None: nothing on top of it), or
    refused: a branch with commits cmhash did not write is never reset."""
    commits, paths = f.ahead(target, p.branch)
    if not commits:
        return None
    ours = len(commits) == 1 and MARK in commits[0].message and paths <= {p.path}
    if not ours or len(commits[0].parents) != 1:
        raise NoteError(
            f"branch {p.branch} holds {len(commits)} commit(s) on top of {target} that "
            f"cmhash lock-request did not write: refusing to reset it (give another "
            "--branch, or delete that branch)"
        )
    return commits[0]


SUPERSEDED = (
    "Superseded: `{path}` on `{target}` is current again (the cluster holds what it "
    "records), so this lock would only roll pods for nothing. Closed by cmhash "
    "lock-request; the next rotation opens a new {kind}."
)


def propose(f: Forge, p: Proposal, target: str, max_text: int) -> str:
    """Open, update or close the request for ``p`` (see the module docstring); what was
    done, in one line."""
    if p.branch == target:
        raise NoteError(
            f"--branch {p.branch} is the target branch: the lock would skip review "
            "(give the request's own branch)"
        )
    current = f.lock_at(target)
    found = f.find()
    if current == p.content:
        if found is None or f.head(p.branch) is None:
            return f"{p.path} on {target} is current: no {f.kind}"
        _own(f, p, target)
        f.close(found[0], SUPERSEDED.format(path=p.path, target=target, kind=f.kind))
        return f"{p.path} on {target} is current: closed the stale {f.kind} {f.sign}{found[0]}"
    target_sha = f.head(target)
    if target_sha is None:
        raise NoteError(f"no branch {target} (give --target)")
    exists = f.head(p.branch) is not None
    mine = _own(f, p, target) if exists else None
    same = mine is not None and f.lock_at(p.branch) == p.content
    if same and mine is not None and mine.parents[0] != target_sha:
        same = f.lock_at(mine.parents[0]) == current  # (the target's lock moved since)
    if not same:
        f.push(target, target_sha, exists, current is None)
    text = _cut(p.description, max_text)
    if found is None:
        return f"opened {f.kind} {f.sign}{f.open(text)}"
    if found[1] != text:
        f.describe(found[0], text)
    elif same:
        return f"{f.kind} {f.sign}{found[0]} is up to date: nothing pushed"
    return f"updated {f.kind} {f.sign}{found[0]}"


_CUT = "\n\n…(cut: the whole rollout plan is in the job's artifacts)\n"


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    room = limit - len(_CUT)
    return text[: text.rfind("\n", 0, room) + 1 or room] + _CUT
