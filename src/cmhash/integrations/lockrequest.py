"""``cmhash lock-request``: the lock file proposed for review, on GitLab as a merge
request, on GitHub as a pull request, only when it changed: the scheduled job of the
recipe (ci-templates/gitlab/cmhash-lock.yml, ci-templates/github/cmhash-lock.yml) writes
the lock and the rollout plan (``cmhash report``), and this opens or updates the request.

Through the forge's API only (one token, no git push, nothing but the standard
library, as comments.py): the lock on the target branch is compared with the new one;
if they differ, the request's branch is set to the target branch plus one commit that
writes the lock, and the request (one per branch) is opened, or its description updated
with the plan. The token goes into a request header only, never into a message or URL.
"""

from __future__ import annotations

import base64
import re
import urllib.parse
from collections.abc import Mapping
from typing import Any, NamedTuple

from cmhash.integrations.comments import Api, NoteError, request, token
from cmhash.integrations.github import GITHUB_API_VERSION

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


def _api(name: str, headers: Mapping[str, str], hint: str) -> Api:
    """An Api for ``request`` (only its name, headers and hint are used here)."""
    return Api(name, "", lambda _: "", "", headers, 0, hint)


def _missing(exc: NoteError) -> bool:
    return "HTTP 404" in exc.message


def _get(api: Api, url: str) -> Any:
    """GET, None for a 404 (a file or branch that is not there yet)."""
    try:
        return request(api, "GET", url)
    except NoteError as exc:
        if _missing(exc):
            return None
        raise


# -- GitLab: https://docs.gitlab.com/api/repository_files/ (raw file), /api/commits/
# (create a commit with actions; start_branch and force recreate the branch from the
# target), /api/merge_requests/ (list by source and target branch, create, update)

GITLAB_MAX_DESCRIPTION = 1_000_000


def gitlab(p: Proposal, env: Mapping[str, str], token_env: str) -> str:
    missing = [v for v in ("CI_API_V4_URL", "CI_PROJECT_ID") if not env.get(v)]
    if missing:
        raise NoteError(f"not a GitLab CI job: {', '.join(missing)} not set")
    target = p.target or env.get("CI_DEFAULT_BRANCH") or ""
    if not target:
        raise NoteError("no target branch: set --target or CI_DEFAULT_BRANCH")
    secret = token(env, token_env, "a project access token with the api scope (Developer role)")
    api = _api("GitLab", {"PRIVATE-TOKEN": secret}, "check the token's scope: api")
    base = (
        f"{env['CI_API_V4_URL'].rstrip('/')}/projects/"
        f"{urllib.parse.quote(env['CI_PROJECT_ID'], safe='')}"
    )
    quoted = urllib.parse.quote(p.path, safe="")
    ref = urllib.parse.quote(target, safe="")
    current = _get(api, f"{base}/repository/files/{quoted}?ref={ref}")
    old = base64.b64decode(current["content"]).decode() if isinstance(current, dict) else None
    if old == p.content:
        return f"{p.path} on {target} is current: no merge request"
    request(
        api,
        "POST",
        f"{base}/repository/commits",
        {
            "branch": p.branch,
            "start_branch": target,
            "force": True,  # the branch is the target plus this one commit
            "commit_message": f"{p.title}\n\nWritten by cmhash lock.",
            "actions": [
                {
                    "action": "create" if old is None else "update",
                    "file_path": p.path,
                    "content": p.content,
                }
            ],
        },
    )
    query = urllib.parse.urlencode(
        {"state": "opened", "source_branch": p.branch, "target_branch": target}
    )
    found = request(api, "GET", f"{base}/merge_requests?{query}")
    description = _cut(p.description, GITLAB_MAX_DESCRIPTION)
    if isinstance(found, list) and found and isinstance(found[0], dict):
        iid = found[0]["iid"]
        request(api, "PUT", f"{base}/merge_requests/{iid}", {"description": description})
        return f"updated merge request !{iid}"
    made = request(
        api,
        "POST",
        f"{base}/merge_requests",
        {
            "source_branch": p.branch,
            "target_branch": target,
            "title": p.title,
            "description": description,
            "remove_source_branch": True,
        },
    )
    return f"opened merge request !{made.get('iid') if isinstance(made, dict) else '?'}"


# -- GitHub: https://docs.github.com/en/rest/repos/contents (get, create or update a file),
# /git/refs (create a branch, force it to a commit), /pulls (list by head and base,
# create, update)

GITHUB_MAX_BODY = 65_536


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
    owner, name = (urllib.parse.quote(x, safe="") for x in repo.split("/"))
    base = f"{env.get('GITHUB_API_URL', 'https://api.github.com').rstrip('/')}/repos/{owner}/{name}"
    target = p.target or _default_branch(api, base)
    path = urllib.parse.quote(p.path)
    current = _get(api, f"{base}/contents/{path}?ref={urllib.parse.quote(target, safe='')}")
    old = base64.b64decode(current["content"]).decode() if isinstance(current, dict) else None
    if old == p.content:
        return f"{p.path} on {target} is current: no pull request"
    head = request(api, "GET", f"{base}/git/ref/heads/{urllib.parse.quote(target)}")
    sha = head["object"]["sha"]
    branch_ref = f"{base}/git/refs/heads/{urllib.parse.quote(p.branch)}"
    if _get(api, branch_ref) is None:
        request(api, "POST", f"{base}/git/refs", {"ref": f"refs/heads/{p.branch}", "sha": sha})
    else:  # the branch is the target plus this one commit
        request(api, "PATCH", branch_ref, {"sha": sha, "force": True})
    body: dict[str, Any] = {
        "message": f"{p.title}\n\nWritten by cmhash lock.",
        "content": base64.b64encode(p.content.encode()).decode(),
        "branch": p.branch,
    }
    if isinstance(current, dict):
        body["sha"] = current["sha"]  # (the branch is the target's: the same file)
    request(api, "PUT", f"{base}/contents/{path}", body)
    query = urllib.parse.urlencode(
        {"state": "open", "head": f"{repo.split('/')[0]}:{p.branch}", "base": target}
    )
    found = request(api, "GET", f"{base}/pulls?{query}")
    text = _cut(p.description, GITHUB_MAX_BODY)
    if isinstance(found, list) and found and isinstance(found[0], dict):
        number = found[0]["number"]
        request(api, "PATCH", f"{base}/pulls/{number}", {"body": text})
        return f"updated pull request #{number}"
    made = request(
        api,
        "POST",
        f"{base}/pulls",
        {"title": p.title, "head": p.branch, "base": target, "body": text},
    )
    return f"opened pull request #{made.get('number') if isinstance(made, dict) else '?'}"


def _default_branch(api: Api, base: str) -> str:
    repo = request(api, "GET", base)
    branch = repo.get("default_branch") if isinstance(repo, dict) else None
    if not isinstance(branch, str) or not branch:
        raise NoteError("the repository names no default branch: give --target")
    return branch


_CUT = "\n\n…(cut: the whole rollout plan is in the job's artifacts)\n"


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    room = limit - len(_CUT)
    return text[: text.rfind("\n", 0, room) + 1 or room] + _CUT
