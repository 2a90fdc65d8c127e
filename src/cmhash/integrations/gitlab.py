"""Post a report as a merge-request note, or update the one posted before.

Only the standard library (urllib): a CI job should not need anything else. The note
carries a hidden marker, so each pipeline edits one note instead of adding another.
The token is read from an environment variable and never printed.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any

from cmhash.errors import UsageError

MARKER = "<!-- cmhash-report -->"
REQUIRED = ("CI_API_V4_URL", "CI_PROJECT_ID", "CI_MERGE_REQUEST_IID")
MAX_BODY = 1_000_000  # GitLab refuses notes over 1,000,000 characters


class NoteError(UsageError):
    """The note could not be posted (exit code 2)."""


def _request(method: str, url: str, token: str, body: dict[str, Any] | None = None) -> Any:
    data = None if body is None else json.dumps(body).encode("utf-8")
    req = urllib.request.Request(
        url,
        data=data,
        method=method,
        headers={"PRIVATE-TOKEN": token, "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as exc:
        raise NoteError(
            f"GitLab API {method} {_safe(url)}: HTTP {exc.code} {exc.reason}"
            + (" (check the token's scope: api)" if exc.code in (401, 403) else "")
        ) from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise NoteError(f"GitLab API {method} {_safe(url)}: {reason}") from None


def _safe(url: str) -> str:
    return url.split("?", 1)[0]


def _find_note(base: str, token: str) -> int | None:
    page = 1
    while page:
        notes = _request("GET", f"{base}?per_page=100&page={page}&sort=asc", token)
        if not isinstance(notes, list):
            return None
        for note in notes:
            if isinstance(note, dict) and MARKER in str(note.get("body", "")):
                return int(note["id"])
        page = page + 1 if len(notes) == 100 else 0
    return None


def post_note(text: str, env: Mapping[str, str], token_env: str) -> tuple[str, int]:
    """Create or update this tool's note on the pipeline's merge request.
    Returns ("created" | "updated", note id)."""
    missing = [v for v in REQUIRED if not env.get(v)]
    if missing:
        raise NoteError(
            f"not a merge-request pipeline: {', '.join(missing)} not set "
            "(run the job with rules: - if: $CI_MERGE_REQUEST_IID)"
        )
    token = env.get(token_env, "")
    if not token:
        raise NoteError(
            f"the token variable {token_env} is empty or not set (a project "
            "access token with the api scope, as a masked CI/CD variable)"
        )
    body = f"{MARKER}\n{text}"
    if len(body) > MAX_BODY:
        body = body[: MAX_BODY - 200] + "\n\n…(truncated: see the job's artifacts)\n"
    project = urllib.parse.quote(env["CI_PROJECT_ID"], safe="")
    base = (
        f"{env['CI_API_V4_URL'].rstrip('/')}/projects/{project}/merge_requests/"
        f"{urllib.parse.quote(env['CI_MERGE_REQUEST_IID'], safe='')}/notes"
    )
    existing = _find_note(base, token)
    if existing is not None:
        _request("PUT", f"{base}/{existing}", token, {"body": body})
        return "updated", existing
    created = _request("POST", base, token, {"body": body})
    return "created", int(created["id"]) if isinstance(created, dict) else 0


def post_from_environment(path: str, token_env: str) -> tuple[str, int]:
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise NoteError(f"{path}: {exc.strerror}") from None
    return post_note(text, os.environ, token_env)
