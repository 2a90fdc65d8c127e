"""One comment per merge request, created or updated: a GitLab merge-request note
(``post_note``) or a GitHub pull-request comment (``post_comment``), and the logic they
share. GitLab's is read from what a merge-request pipeline sets (CI_API_V4_URL,
CI_PROJECT_ID, CI_MERGE_REQUEST_IID); GitHub's from what GitHub Actions sets
(GITHUB_API_URL, GITHUB_REPOSITORY, and the pull request's number from the event in
GITHUB_EVENT_PATH unless given).

Only the standard library (urllib): a CI job should not need anything else. The
comment carries a hidden marker, so each pipeline edits one comment instead of adding
another. The token goes into a request header only: never into a message or a URL.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from cmhash.errors import UsageError
from cmhash.knowledge.defaults import path_get

MARKER = "<!-- cmhash-report -->"
GITLAB_REQUIRED = ("CI_API_V4_URL", "CI_PROJECT_ID", "CI_MERGE_REQUEST_IID")
GITLAB_MAX_BODY = 1_000_000  # GitLab refuses notes over 1,000,000 characters
# GitHub's REST API: issue comments (a pull request is an issue for comments)
# https://docs.github.com/en/rest/issues/comments (list, create, update: PATCH)
GITHUB_MAX_BODY = 65_536  # GitHub refuses comment bodies over 65,536 characters
GITHUB_API_VERSION = "2022-11-28"


class NoteError(UsageError):
    """The comment could not be posted (exit code 2)."""


Mine = Callable[[Mapping[str, Any]], bool]  # whether a listed comment is the token's own


class Api(NamedTuple):
    """Where one forge keeps a merge request's comments, and how it is spoken to."""

    name: str  # "GitLab", "GitHub"
    comments: str  # the list (GET, paged) and create (POST) URL
    update: Callable[[int], str]  # a comment's URL
    update_method: str  # PUT (GitLab) or PATCH (GitHub)
    headers: Mapping[str, str]  # the token goes here, and only here
    max_body: int
    scope_hint: str  # said on 401/403
    # who the token posts as, asked once a comment with the marker turns up: anyone can
    # paste the marker into a comment of their own, and that one is never updated (on
    # GitHub the report would show under their name, for them to edit; on GitLab the
    # update is refused and the job fails)
    mine: Callable[[Api], Mine] = lambda api: lambda item: True


def request(api: Api, method: str, url: str, body: dict[str, Any] | None = None) -> Any:
    data = None if body is None else json.dumps(body).encode("utf-8")
    headers = {**api.headers, "Content-Type": "application/json"}
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as exc:
        raise NoteError(
            f"{api.name} API {method} {_safe(url)}: HTTP {exc.code} {exc.reason}"
            + (f" ({api.scope_hint})" if exc.code in (401, 403) else "")
        ) from None
    except http.client.HTTPException as exc:  # a reply that is not HTTP (a wrong port...)
        raise NoteError(
            f"{api.name} API {method} {_safe(url)}: not an HTTP reply "
            f"({type(exc).__name__}): check the API URL"
        ) from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = str(getattr(exc, "reason", exc))
        for value in api.headers.values():  # (a header value is the token: never shown)
            if value:
                reason = reason.replace(repr(value.encode()), "<token>").replace(value, "<token>")
        if isinstance(exc, ValueError) and not isinstance(exc, OSError):
            reason = "not a valid request (check the API URL and the token variable)"
        raise NoteError(f"{api.name} API {method} {_safe(url)}: {reason}") from None


_USERINFO = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*://)[^/@?#]*@")


def _safe(url: str) -> str:
    """The URL as a message shows it: no query, no credentials (``user:token@``)."""
    return _USERINFO.sub(r"\1***@", url.split("?", 1)[0])


def find(api: Api) -> int | None:
    """The id of the token's own comment carrying the marker (the first, oldest), if any."""
    page = 1
    mine: Mine | None = None
    while page:
        sep = "&" if "?" in api.comments else "?"
        items = request(api, "GET", f"{api.comments}{sep}per_page=100&page={page}")
        if not isinstance(items, list):
            return None
        for item in items:
            if (
                isinstance(item, dict)
                and isinstance(item.get("id"), int)
                and MARKER in str(item.get("body", ""))
            ):
                mine = mine or api.mine(api)
                if mine(item):
                    return int(item["id"])
        page = page + 1 if len(items) == 100 else 0
    return None


def token(env: Mapping[str, str], name: str, what: str) -> str:
    """The token in the variable ``name`` (``what``: the token it must be)."""
    value = env.get(name, "").strip()  # (a trailing newline of a pasted token)
    if not value:
        raise NoteError(f"the token variable {name} is empty or not set ({what})")
    return value


def whoami(api: Api, url: str, *path: str) -> Any:
    """``path`` of the token's own user (GET ``url``), or None when it may not ask."""
    try:
        return path_get(request(api, "GET", url), path)
    except NoteError:
        return None


TRUNCATED = "\n\n…(truncated: see the job's artifacts)\n"
_FENCE = re.compile(r"^(`{3,}|~{3,})")


def _closers(lines: list[str]) -> str:
    """What closes the code fence and the ``<details>`` blocks left open at the end of
    ``lines``: a cut inside them would hide the truncation note in a collapsed block or
    a code block."""
    fence = ""
    details = 0
    for line in lines:
        m = _FENCE.match(line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = "" if not line[len(m.group(1)) :].strip() else fence
            continue
        if m:
            fence = m.group(1)
            continue
        details += line.count("<details") - line.count("</details>")
    return (f"\n{fence}" if fence else "") + "\n\n</details>" * min(max(details, 0), 100)


def body_of(text: str, max_body: int) -> str:
    """The comment: the marker, then the report; one too long is cut at a line (room
    kept for closing what is open there, and for the note that says so)."""
    body = f"{MARKER}\n{text}"
    if len(body) <= max_body:
        return body
    room = max_body - len(TRUNCATED) - 2000  # (closing fences and <details> fits in it)
    cut = body[:room]
    lines = cut[: cut.rfind("\n") + 1 or len(cut)].splitlines()
    return "\n".join(lines) + _closers(lines) + TRUNCATED


def upsert(api: Api, text: str) -> tuple[str, int]:
    """Create or update this tool's comment. Returns ("created" | "updated", its id)."""
    body = body_of(text, api.max_body)
    existing = find(api)
    if existing is not None:
        request(api, api.update_method, api.update(existing), {"body": body})
        return "updated", existing
    created = request(api, "POST", api.comments, {"body": body})
    return "created", int(created["id"]) if isinstance(created, dict) else 0


def read_report(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except OSError as exc:
        raise NoteError(f"{path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise NoteError(f"{path}: not UTF-8 (a Markdown report is)") from None


# -- GitLab


def _gitlab_mine(user_url: str) -> Callable[[Api], Mine]:
    """The token's user (GET /user: a project access token's bot user), and its notes
    by author id; a token that may not ask owns no note (a new one is created)."""

    def mine(api: Api) -> Mine:
        me = whoami(api, user_url, "id")
        return lambda item: me is not None and path_get(item, ("author", "id")) == me

    return mine


def post_note(text: str, env: Mapping[str, str], token_env: str) -> tuple[str, int]:
    """Create or update this tool's note on the pipeline's merge request.
    Returns ("created" | "updated", note id)."""
    missing = [v for v in GITLAB_REQUIRED if not env.get(v)]
    if missing:
        raise NoteError(
            f"not a merge-request pipeline: {', '.join(missing)} not set "
            "(run the job with rules: - if: $CI_MERGE_REQUEST_IID)"
        )
    secret = token(
        env, token_env, "a project access token with the api scope, as a masked CI/CD variable"
    )
    project = urllib.parse.quote(env["CI_PROJECT_ID"], safe="")
    base = (
        f"{env['CI_API_V4_URL'].rstrip('/')}/projects/{project}/merge_requests/"
        f"{urllib.parse.quote(env['CI_MERGE_REQUEST_IID'], safe='')}/notes"
    )
    api = Api(
        "GitLab",
        f"{base}?sort=asc",
        lambda note: f"{base}/{note}",
        "PUT",
        {"PRIVATE-TOKEN": secret},
        GITLAB_MAX_BODY,
        "check the token's scope: api",
        _gitlab_mine(f"{env['CI_API_V4_URL'].rstrip('/')}/user"),
    )
    return upsert(api, text)


def post_note_from_environment(path: str, token_env: str) -> tuple[str, int]:
    return post_note(read_report(path), os.environ, token_env)


# -- GitHub


def _pr_number(env: Mapping[str, str], pr: int | None) -> int:
    if pr is not None:
        return pr
    path = env.get("GITHUB_EVENT_PATH")
    number = None
    if path:
        try:
            with open(path, encoding="utf-8") as fh:
                event = json.load(fh)
            number = (event.get("pull_request") or {}).get("number") or event.get("number")
        except (OSError, ValueError, AttributeError):
            number = None
    if not isinstance(number, int):
        raise NoteError(
            "not a pull-request run: no pull request number in GITHUB_EVENT_PATH "
            "(run on: pull_request, or pass --pr N)"
        )
    return number


def _github_mine(user_url: str) -> Callable[[Api], Mine]:
    """The token's login (GET /user), and its comments by it; the job's GITHUB_TOKEN (or
    an app's token) may not ask (403): then its comments are a bot's."""

    def mine(api: Api) -> Mine:
        login = whoami(api, user_url, "login")
        if isinstance(login, str) and login:
            return lambda item: path_get(item, ("user", "login")) == login
        return lambda item: path_get(item, ("user", "type")) == "Bot"

    return mine


def post_comment(
    text: str, env: Mapping[str, str], token_env: str, pr: int | None = None
) -> tuple[str, int]:
    """Create or update this tool's comment on the pull request.
    Returns ("created" | "updated", comment id)."""
    repo = env.get("GITHUB_REPOSITORY", "")
    if repo.count("/") != 1:
        raise NoteError("GITHUB_REPOSITORY is not set to owner/name (not a GitHub Actions run?)")
    secret = token(env, token_env, "the job's GITHUB_TOKEN with permissions: pull-requests: write")
    number = _pr_number(env, pr)
    api_url = env.get("GITHUB_API_URL", "https://api.github.com").rstrip("/")
    owner, name = (urllib.parse.quote(p, safe="") for p in repo.split("/"))
    base = f"{api_url}/repos/{owner}/{name}/issues"
    api = Api(
        "GitHub",
        f"{base}/{number}/comments",
        lambda comment: f"{base}/comments/{comment}",
        "PATCH",
        {
            "Authorization": f"Bearer {secret}",
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": GITHUB_API_VERSION,
        },
        GITHUB_MAX_BODY,
        "the token needs permissions: pull-requests: write",
        _github_mine(f"{api_url}/user"),
    )
    return upsert(api, text)


def post_comment_from_environment(
    path: str, token_env: str, pr: int | None = None
) -> tuple[str, int]:
    return post_comment(read_report(path), os.environ, token_env, pr)
