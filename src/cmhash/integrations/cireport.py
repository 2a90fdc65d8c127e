"""``cmhash ci-report``: the merge-request job the GitLab template and the GitHub action
both run. It renders the base and the head with the user's command (the base in a
``git worktree`` at the merge base), runs the report once, writes every format to the
output directory, appends the Markdown to a job summary, creates or updates the one
merge-request comment, and exits as ``report`` does (``--fail-on``, the budget).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from cmhash.errors import UsageError

# file name -> format (the artifacts both CI integrations keep)
ARTIFACTS = {
    "report.json": "json",
    "codequality.json": "codequality",
    "report.md": "markdown",
}


class Job(NamedTuple):
    render: str  # a shell command that writes the manifests to stdout
    base: str  # a commit, branch or tag
    output_dir: str
    comment: str  # none | gitlab | github
    token_env: str | None
    summary: str | None  # a file the Markdown is appended to ($GITHUB_STEP_SUMMARY)
    comment_key: str | None = None  # which comment is this job's (default: its paths)


def comment_key(job: Job, prefix: str) -> Any:
    """This job's comment: ``--comment-key`` (also shown above the report), else the
    job's paths: the directory it renders in (``prefix``: from the repository's root,
    shown when not the root) and its render command (two jobs of one merge request, a
    matrix over environments or a monorepo's directories, keep a comment each)."""
    from cmhash.integrations.comments import Key

    if job.comment_key:
        return Key(job.comment_key, job.comment_key)
    return Key(f"{prefix}\0{job.render.strip()}", prefix.rstrip("/"))


# variables that may hold a token (the CI's own, and --token-env's): never in a message
TOKEN_VARIABLES = ("CI_JOB_TOKEN", "CMHASH_GITLAB_TOKEN", "GITHUB_TOKEN", "GH_TOKEN")
_USERINFO = re.compile(r"(\b[a-zA-Z][a-zA-Z0-9+.-]*://)[^/@\s]+@")
_NOISE = re.compile(r"^(hint|warning|remote|To |From )", re.IGNORECASE)
SHALLOW_FIX = (
    "the clone is shallow: fetch the whole history (GitLab: variables: GIT_DEPTH: 0; "
    "GitHub: actions/checkout with fetch-depth: 0)"
)


def git_message(stderr: str, env: Mapping[str, str], token_env: str | None = None) -> str:
    """git's error as one line: its first meaningful line (a ``fatal:``/``error:`` one
    first; hints, progress and blank lines skipped), without the ``fatal:`` prefix, the
    credentials of any URL, or the value of any token variable."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    first = next((ln for ln in lines if ln.lower().startswith(("fatal:", "error:"))), None)
    if first is None:
        first = next((ln for ln in lines if not _NOISE.match(ln)), lines[0] if lines else "")
    text = re.sub(r"^(fatal|error):\s*", "", first, flags=re.IGNORECASE)
    text = _USERINFO.sub(r"\1***@", text)
    for name in (*TOKEN_VARIABLES, *([token_env] if token_env else [])):
        value = env.get(name)
        if value and len(value) >= 4:
            text = text.replace(value, "***")
    from cmhash.visible import visible

    return visible(text)


def _git(*args: str, cwd: str | None = None, token_env: str | None = None) -> str:
    res = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if res.returncode != 0:
        why = git_message(res.stderr, os.environ, token_env) or f"exit {res.returncode}"
        raise UsageError(f"git {args[0]} failed: {why}")
    return res.stdout.strip()


def _shallow() -> bool:
    res = subprocess.run(
        ["git", "rev-parse", "--is-shallow-repository"], capture_output=True, text=True
    )
    return res.stdout.strip() == "true"


def _base_commit(base: str, token_env: str | None = None) -> str:
    """The commit to compare with: the merge base of ``base`` and HEAD (fetched from
    origin when the clone lacks it). In a shallow clone without the merge base, exit 2
    saying how to fetch the history: comparing with the base's tip instead would list
    every change merged into the base since the branch point as this change's."""
    probe = subprocess.run(
        ["git", "rev-parse", "--verify", "--quiet", f"{base}^{{commit}}"],
        capture_output=True,
        text=True,
    )
    commit = probe.stdout.strip()
    if probe.returncode != 0:
        try:
            _git("fetch", "--quiet", "origin", base, token_env=token_env)
        except UsageError as exc:
            hint = f"; {SHALLOW_FIX}" if _shallow() else ""
            raise UsageError(f"cannot fetch the base {base!r} from origin: {exc}{hint}") from None
        commit = _git("rev-parse", "FETCH_HEAD")
    merge = subprocess.run(["git", "merge-base", commit, "HEAD"], capture_output=True, text=True)
    if merge.returncode == 0 and merge.stdout.strip():
        return merge.stdout.strip()
    if _shallow():
        raise UsageError(f"no merge base of {base!r} and HEAD in this clone: {SHALLOW_FIX}")
    return commit  # unrelated histories: the base itself


def _render(command: str, cwd: str, out: Path, side: str) -> None:
    shell = shutil.which("bash") or "/bin/sh"
    with open(out, "wb") as fh:
        res = subprocess.run([shell, "-c", command], cwd=cwd, stdout=fh)
    if res.returncode != 0:
        from cmhash.visible import visible

        # a `render: |` block is several lines: the message stays one (its newlines as \n)
        raise UsageError(
            f"render failed in the {side} checkout (exit {res.returncode}): "
            f"{visible(command.strip())}"
        )


def render_sides(job: Job) -> tuple[Path, Path]:
    """old.yaml (the base, in a temporary worktree) and new.yaml (the checkout), each
    rendered in the same directory of its tree: the one ci-report runs in (a monorepo's
    job may ``cd deploy`` first; the base's render must not run at the worktree's root)."""
    out = Path(job.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    base = _base_commit(job.base, job.token_env)
    head = _git("rev-parse", "--short", "HEAD")
    prefix = _git("rev-parse", "--show-prefix")  # "" at the root, else "deploy/"
    from cmhash.output import err

    err(f"comparing {base[:7]} (old) with {head} (new)")
    old, new = out / "old.yaml", out / "new.yaml"
    with tempfile.TemporaryDirectory() as tmp:
        # both rendered outside the checkout, then moved in: a render that reads every
        # .yaml under it (find . -name '*.yaml') must not read the base's old.yaml
        rendered = Path(tmp) / "old.yaml", Path(tmp) / "new.yaml"
        worktree = os.path.join(tmp, "base")
        _git("worktree", "add", "--quiet", "--detach", worktree, base)
        try:
            here = os.path.join(worktree, prefix)
            if not os.path.isdir(here):
                raise UsageError(
                    f"the base {job.base!r} has no directory {prefix.rstrip('/')}: ci-report "
                    "renders both sides in the directory it runs in; run it where both have it"
                )
            _render(job.render, here, rendered[0], "base")
        finally:
            _git("worktree", "remove", "--force", worktree)
        _render(job.render, os.getcwd(), rendered[1], "head")
        for src, dst in zip(rendered, (old, new), strict=True):
            shutil.move(src, dst)
    return old, new


def _in_merge_request(comment: str, env: Mapping[str, str]) -> bool:
    if comment == "gitlab":
        return bool(env.get("CI_MERGE_REQUEST_IID"))
    path = env.get("GITHUB_EVENT_PATH")
    if not path:
        return False
    try:
        import json

        with open(path, encoding="utf-8") as fh:
            return "pull_request" in json.load(fh)
    except (OSError, ValueError, TypeError):
        return False


def _post(comment: str, text: str, env: Mapping[str, str], token_env: str | None, key: Any) -> str:
    if comment == "gitlab":
        from cmhash.integrations.gitlab import post_note

        how, ident = post_note(text, env, token_env or "CMHASH_GITLAB_TOKEN", key)
        return f"{how} merge-request note {ident}"
    from cmhash.integrations.github import post_comment

    how, ident = post_comment(text, env, token_env or "GITHUB_TOKEN", None, key)
    return f"{how} pull-request comment {ident}"


def run(
    job: Job,
    settings: Any,
    fail_on: str | None,
    budget: Any,
    values: bool,
    nodes: int | None = None,
) -> int:
    from cmhash import report
    from cmhash.output import err, write_stdout
    from cmhash.write.writer import write_new_file

    if shutil.which("git") is None:
        raise UsageError(
            "ci-report needs git (it renders the base in a git worktree): use an image "
            "with git, and with what your render command runs"
        )
    try:
        Path(job.output_dir).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(
            f"cannot make the output directory {job.output_dir}: {exc.strerror}"
        ) from None
    old, new = render_sides(job)
    data = report.data_of(str(old), str(new), settings, values, nodes=nodes)
    texts = {name: report.formatted(data, fmt, None) for name, fmt in ARTIFACTS.items()}
    over = budget.over(data)
    if over is not None:  # the comment says why the job fails, as its log does
        texts["report.md"] += f"\n> ❌ **Over budget**: {over}\n"
    for name, text in texts.items():
        write_new_file(str(Path(job.output_dir) / name), text)
    write_stdout(report.formatted(data, "text", None))
    if job.summary:
        try:
            with open(job.summary, "a", encoding="utf-8") as fh:
                fh.write(texts["report.md"])
        except OSError as exc:
            raise UsageError(
                f"cannot append to the summary {job.summary}: {exc.strerror}"
            ) from None
    env = os.environ
    if job.comment != "none":
        if _in_merge_request(job.comment, env):
            key = comment_key(job, _git("rev-parse", "--show-prefix"))
            err(_post(job.comment, texts["report.md"], env, job.token_env, key))
        else:
            what = "merge request" if job.comment == "gitlab" else "pull request"
            err(f"not a {what}: no comment posted")
    return report.verdict(data, fail_on, budget)
