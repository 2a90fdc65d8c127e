"""One comment per merge request and job, created or updated: the logic a GitLab
merge-request note (integrations/gitlab.py ``post_note``) and a GitHub pull-request
comment (integrations/github.py ``post_comment``) share.

Only the standard library (urllib): a CI job should not need anything else. The
comment carries a hidden marker, so each pipeline edits one comment instead of adding
another. The marker carries a key (``marker``: a digest of ``--comment-key``, or of the
job's paths by default), so that two jobs of one merge request (a matrix over
environments, a monorepo's directories) keep a comment each; a comment of this tool
with the marker of earlier versions (no key) is taken over once, so that nothing stale
stays behind. Only the token's own comments count (``mine``: whose, github.py's and
gitlab.py's docstrings say). The token goes into a request header only: never into a
message or a URL.
"""

from __future__ import annotations

import hashlib
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

MARKER = "<!-- cmhash-report -->"  # without a key: the marker of earlier versions


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
        said = _said(exc, api)
        if said.lower() in (f"{exc.code} {exc.reason}".lower(), str(exc.reason).lower()):
            said = ""  # (the status again)
        hint = api.scope_hint if exc.code == 401 or (exc.code == 403 and not said) else ""
        raise NoteError(
            f"{api.name} API {method} {_safe(url)}: HTTP {exc.code} {exc.reason}"
            + (f": {api.name} says {said!r}" if said else "")
            + (f" ({hint})" if hint else "")
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


def _texts(value: Any, depth: int = 0) -> list[str]:
    """The messages in a forge's error body: GitLab's ``message`` is a string, a list or
    a mapping of field -> list; GitHub's ``errors`` items carry a ``message`` or a
    ``code`` and ``field``."""
    if depth > 5:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [t for v in value for t in _texts(v, depth + 1)]
    if isinstance(value, dict):
        if "message" in value or "error" in value:
            return _texts(value.get("message") or value.get("error"), depth + 1)
        if "code" in value:
            return [" ".join(str(value[k]) for k in ("resource", "field", "code") if k in value)]
        return [f"{k}: {t}" for k, v in value.items() for t in _texts(v, depth + 1)]
    return []


def _said(exc: urllib.error.HTTPError, api: Api) -> str:
    """What the forge said of its refusal, on one line (the token never in it)."""
    try:
        body = json.loads(exc.read(65536) or b"null")
    except (OSError, ValueError, http.client.HTTPException):
        return ""
    if not isinstance(body, dict):
        return ""
    texts = _texts(body.get("message") or body.get("error"))
    texts += _texts(body.get("errors")) if isinstance(body.get("errors"), list) else []
    text = " ".join("; ".join(t for t in texts if t).split())
    for value in api.headers.values():
        if value:
            text = text.replace(value, "<token>")
    return text if len(text) <= 300 else text[:299] + "…"


_USERINFO = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*://)[^/@?#]*@")


def _safe(url: str) -> str:
    """The URL as a message shows it: no query, no credentials (``user:token@``)."""
    return _USERINFO.sub(r"\1***@", url.split("?", 1)[0])


def marker(key: str) -> str:
    """The hidden line that marks this tool's comment for ``key`` (the legacy ``MARKER``
    for no key): a digest, so that no key text (a render command) shows or breaks the
    HTML comment."""
    if not key:
        return MARKER
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]
    return f"<!-- cmhash-report key={digest} -->"


def _marked(item: Any, line: str) -> bool:
    if not isinstance(item, dict) or not isinstance(item.get("id"), int):
        return False
    return line in str(item.get("body", "")).splitlines()


def find(api: Api, key: str = "") -> int | None:
    """The id of the token's own comment carrying ``key``'s marker (the first, oldest), if
    any; else of its own comment with the legacy marker (no key), taken over."""
    page = 1
    mine: Mine | None = None
    wanted, legacy = marker(key), None
    while page:
        sep = "&" if "?" in api.comments else "?"
        items = request(api, "GET", f"{api.comments}{sep}per_page=100&page={page}")
        if not isinstance(items, list):
            return legacy
        for item in items:
            hit = _marked(item, wanted)
            old = not hit and legacy is None and key != "" and _marked(item, MARKER)
            if hit or old:
                mine = mine or api.mine(api)
                if not mine(item):
                    continue
                if hit:
                    return int(item["id"])
                legacy = int(item["id"])
        page = page + 1 if len(items) == 100 else 0
    return legacy


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


def body_of(text: str, max_body: int, key: str = "", label: str = "") -> str:
    """The comment: the marker, a line naming the job (``label``, when given), then the
    report; one too long is cut at a line (room kept for closing what is open there, and
    for the note that says so)."""
    named = f"<sub>{_html(label)}</sub>\n\n" if label else ""
    body = f"{marker(key)}\n{named}{text}"
    if len(body) <= max_body:
        return body
    room = max_body - len(TRUNCATED) - 2000  # (closing fences and <details> fits in it)
    cut = body[:room]
    lines = cut[: cut.rfind("\n") + 1 or len(cut)].splitlines()
    return "\n".join(lines) + _closers(lines) + TRUNCATED


def _html(text: str) -> str:
    from html import escape

    return escape(text.replace("\n", " "), quote=False)


class Key(NamedTuple):
    """Which of a merge request's comments is this job's: ``key`` (hashed into the
    marker) and ``label`` (shown above the report; "" for none)."""

    key: str = ""
    label: str = ""


NO_KEY = Key()  # the legacy marker


def file_key(path: str, given: str | None, root_env: str) -> Key:
    """``--comment-key`` (shown above the report), else the report file's path from the
    repository's root: ``root_env`` (CI_PROJECT_DIR, GITHUB_WORKSPACE) or the git top
    level of the file's directory, symbolic links resolved. However the file is named
    (``report.md``, ``./report.md``, its absolute path) and wherever the job runs from,
    one file is one key, the same in every pipeline; ``report.md`` of two directories
    is two. A file outside the repository: its whole resolved path."""
    if given:
        return Key(given, given)
    where = os.path.realpath(path)
    for root in (os.environ.get(root_env), _top_level(os.path.dirname(where))):
        if root:
            rel = os.path.relpath(where, os.path.realpath(root))
            if rel != os.pardir and not rel.startswith(os.pardir + os.sep):
                return Key(rel.replace(os.sep, "/"))
    return Key(where)


def _top_level(directory: str) -> str | None:
    """The top level of the git work tree ``directory`` is in, if git says one."""
    import subprocess

    try:
        out = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"],
            cwd=directory,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return (out.stdout.strip() or None) if out.returncode == 0 else None


def upsert(api: Api, text: str, key: Key = NO_KEY) -> tuple[str, int]:
    """Create or update this tool's comment for ``key``. Returns ("created" |
    "updated", its id)."""
    body = body_of(text, api.max_body, key.key, key.label)
    existing = find(api, key.key)
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
