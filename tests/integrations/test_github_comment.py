"""cmhash github-comment: one pull-request comment, created then updated (POST, then
PATCH), against a fake GitHub REST API; found by the hidden marker past the first page;
one-line errors that never show the token."""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path

from conftest import run_cmhash
from fakegithub import BOT, RENOVATE, TOKEN, FakeGitHub

from cmhash.integrations.comments import MARKER, marker


def _event(tmp_path: Path, number: int = 7) -> str:
    p = tmp_path / "event.json"
    p.write_text(json.dumps({"action": "synchronize", "pull_request": {"number": number}}))
    return str(p)


def _comment(tmp_path: Path, text: str, env: dict[str, str], *args: str) -> tuple[int, str]:
    f = tmp_path / "report.md"
    f.write_text(text)
    res = run_cmhash(["github-comment", str(f), *args], env=env)
    assert TOKEN not in res.stderr and TOKEN.encode() not in res.stdout
    return res.code, res.stderr


def test_first_run_posts_second_run_patches(tmp_path: Path) -> None:
    with FakeGitHub() as gh:
        env = gh.env(_event(tmp_path))
        code, err = _comment(tmp_path, "### cmhash: 1 workload will restart\n", env)
        assert (code, err) == (0, "created pull-request comment 101\n")
        code, err = _comment(tmp_path, "### cmhash: No workload will restart\n", env)
        assert (code, err) == (0, "updated pull-request comment 101\n")
        assert [c["body"] for c in gh.comments] == [
            "looks good 0",
            f"{marker(str(tmp_path / 'report.md'))}\n### cmhash: No workload will restart\n",
        ]
        assert [(m, p.split("?")[0]) for m, p in gh.requests] == [
            ("GET", "/repos/shop/deploy/issues/7/comments"),
            ("POST", "/repos/shop/deploy/issues/7/comments"),
            ("GET", "/repos/shop/deploy/issues/7/comments"),
            ("GET", "/user"),  # a marker: whose comment? (403 for the job's token)
            ("POST", "/graphql"),  # viewer: github-actions[bot]
            ("PATCH", "/repos/shop/deploy/issues/comments/101"),
        ]


def test_marker_found_on_a_later_page(tmp_path: Path) -> None:
    with FakeGitHub(comments=150) as gh:
        gh.comments[120] |= {"body": f"{MARKER}\nold report", "user": BOT}
        code, err = _comment(tmp_path, "new report", gh.env(_event(tmp_path)))
        assert (code, err) == (0, "updated pull-request comment 220\n")
        assert len(gh.comments) == 150  # no duplicate
        # the comment of an earlier version, taken over with this job's marker
        key = marker(str(tmp_path / "report.md"))
        assert [c["id"] for c in gh.comments if key in c["body"]] == [220]
        assert not any(MARKER in c["body"] for c in gh.comments)


def test_pr_option_without_an_event(tmp_path: Path) -> None:
    with FakeGitHub() as gh:
        env = gh.env("")
        code, err = _comment(tmp_path, "x", env)
        assert code == 2 and "pass --pr N" in err
        code, err = _comment(tmp_path, "x", env, "--pr", "12")
        assert (code, err) == (0, "created pull-request comment 101\n")
        assert gh.requests[-1] == ("POST", "/repos/shop/deploy/issues/12/comments")


def test_wrong_token_is_one_line_without_it(tmp_path: Path) -> None:
    with FakeGitHub() as gh:
        env = gh.env(_event(tmp_path), GITHUB_TOKEN="ghs_wrong-token-value")
        code, err = _comment(tmp_path, "x", env)
    assert code == 2
    assert "ghs_wrong-token-value" not in err
    assert err == (
        f"cmhash: GitHub API GET {gh.url}/repos/shop/deploy/issues/7/comments: HTTP 401 "
        "Unauthorized: GitHub says 'Bad credentials' (the token needs permissions: "
        "pull-requests: write)\n"
    )


def test_missing_token_and_repository(tmp_path: Path) -> None:
    code, err = _comment(tmp_path, "x", {"GITHUB_REPOSITORY": "shop/deploy", "GITHUB_TOKEN": ""})
    assert code == 2 and "GITHUB_TOKEN is empty or not set" in err
    code, err = _comment(tmp_path, "x", {"GITHUB_REPOSITORY": "", "GITHUB_TOKEN": TOKEN})
    assert code == 2 and err.count("\n") == 1 and "GITHUB_REPOSITORY" in err


def test_long_report_is_truncated_to_githubs_limit(tmp_path: Path) -> None:
    with FakeGitHub() as gh:
        code, _ = _comment(tmp_path, "x" * 100_000, gh.env(_event(tmp_path)))
        assert code == 0
        assert len(gh.comments[-1]["body"]) <= 65_536
        assert gh.comments[-1]["body"].startswith(marker(str(tmp_path / "report.md")))


def _not_http(replies: int) -> tuple[socket.socket, threading.Thread]:
    """A server on a port that answers with something other than HTTP (an SSH banner, a
    wrong service behind the API URL)."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(replies)

    def serve() -> None:
        for _ in range(replies):
            conn, _addr = srv.accept()
            conn.recv(65536)
            conn.sendall(b"SSH-2.0-OpenSSH_9.6\r\n\r\n")
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return srv, thread


def test_a_reply_that_is_not_http_is_one_line(tmp_path: Path) -> None:
    srv, thread = _not_http(1)
    url = f"http://127.0.0.1:{srv.getsockname()[1]}"
    with FakeGitHub() as gh:
        code, err = _comment(tmp_path, "x", gh.env(_event(tmp_path), GITHUB_API_URL=url))
    thread.join(5)
    srv.close()
    assert code == 2, err
    assert err == (
        f"cmhash: GitHub API GET {url}/repos/shop/deploy/issues/7/comments: not an HTTP "
        "reply (BadStatusLine): check the API URL\n"
    )


def test_credentials_in_the_api_url_are_never_shown(tmp_path: Path) -> None:
    with FakeGitHub() as gh:
        host = gh.url.removeprefix("http://")
        for url in (f"http://x-access-token:{TOKEN}@{host}", f"http://{TOKEN}@{host}"):
            code, err = _comment(tmp_path, "x", gh.env(_event(tmp_path), GITHUB_API_URL=url))
            assert code == 2 and err.count("\n") == 1, err
            assert err.startswith("cmhash: GitHub API GET http://***@"), err


def test_a_report_cut_inside_its_value_diffs_closes_them_before_the_note(tmp_path: Path) -> None:
    # a report whose ConfigMap value diffs (a <details> block of code fences) run past
    # GitHub's limit: the cut comes at a line, the open fence and <details> are closed,
    # so the truncation note shows, not folded inside a collapsed block of code
    diff = "\n".join(f"+line {i} " + "x" * 190 for i in range(40))
    block = "".join(f"ConfigMap `c{i}` · `k`\n\n```diff\n{diff}\n```\n\n" for i in range(20))
    text = f"### cmhash: 1 workload will restart\n\n<details><summary>values</summary>\n\n{block}</details>\n"
    with FakeGitHub() as gh:
        code, _ = _comment(tmp_path, text, gh.env(_event(tmp_path)))
        assert code == 0
        body = gh.comments[-1]["body"]
    assert len(body) <= 65_536
    assert body.endswith("\n```\n\n</details>\n\n…(truncated: see the job's artifacts)\n"), body[
        -300:
    ]
    lines = body.splitlines()
    assert all(ln.startswith(("+line", "```", "ConfigMap", "<", "#", "…")) for ln in lines if ln)
    assert sum(ln.startswith("```") for ln in lines) % 2 == 0


def test_a_marker_in_someone_elses_comment_is_never_updated(tmp_path: Path) -> None:
    # anyone can paste the marker: updating their comment would show the report under
    # their name, for them to edit (a forged "No workload will restart")
    with FakeGitHub() as gh:
        gh.comments[0]["body"] = f"{MARKER}\n### cmhash: No workload will restart\n"
        env = gh.env(_event(tmp_path))
        code, err = _comment(tmp_path, "### cmhash: 9 workloads will restart\n", env)
        assert (code, err) == (0, "created pull-request comment 101\n")
        code, err = _comment(tmp_path, "### cmhash: 8 workloads will restart\n", env)
        assert (code, err) == (0, "updated pull-request comment 101\n")
        assert gh.comments[0]["body"].endswith("No workload will restart\n")  # untouched
        assert gh.comments[1]["user"] == BOT
        assert not any(m == "PATCH" and p.endswith("/100") for m, p in gh.requests)


def test_a_personal_token_updates_its_own_comment_only(tmp_path: Path) -> None:
    # GET /user answers for a personal access token: its login decides, not "a bot"
    with FakeGitHub(comments=2, login="deploy-bot") as gh:
        gh.comments[0] |= {"body": f"{MARKER}\nby a bot", "user": BOT}
        gh.comments[1] |= {"body": f"{MARKER}\nby deploy-bot", "user": {"login": "deploy-bot"}}
        code, err = _comment(tmp_path, "new report", gh.env(_event(tmp_path)))
        assert (code, err) == (0, "updated pull-request comment 101\n")
        assert gh.comments[0]["body"] == f"{MARKER}\nby a bot"


def test_another_bots_comment_with_the_marker_is_never_updated(tmp_path: Path) -> None:
    # the job's GITHUB_TOKEN cannot ask GET /user (403): its identity is
    # github-actions[bot] (GraphQL's viewer), never "any bot": renovate's comment quoting
    # the marker stays renovate's
    with FakeGitHub() as gh:
        gh.comments[0] |= {"body": f"{MARKER}\nrenovate quoting it", "user": RENOVATE}
        code, err = _comment(tmp_path, "plan\n", gh.env(_event(tmp_path)))
        assert (code, err) == (0, "created pull-request comment 101\n")
        assert gh.comments[0]["body"] == f"{MARKER}\nrenovate quoting it"
        assert gh.comments[1]["user"] == BOT


def test_an_app_token_finds_its_own_comment_by_the_graphql_viewer(tmp_path: Path) -> None:
    # an App's installation token posts as <slug>[bot]: GraphQL's viewer names it (GET
    # /user and GET /app do not answer an installation token); github-actions[bot]'s
    # comment with the same marker is not this token's
    with FakeGitHub(comments=2, bot="cmhash-app[bot]") as gh:
        key = marker("prod")
        gh.comments[0] |= {"body": f"{key}\nby actions", "user": BOT}
        gh.comments[1] |= {"body": f"{key}\nby the app", "user": {"login": "cmhash-app[bot]"}}
        code, err = _comment(tmp_path, "new\n", gh.env(_event(tmp_path)), "--comment-key", "prod")
        assert (code, err) == (0, "updated pull-request comment 101\n")
        assert gh.comments[0]["body"] == f"{key}\nby actions"


def test_without_any_answer_the_identity_is_the_jobs_bot(tmp_path: Path) -> None:
    with FakeGitHub(bot=None) as gh:  # GraphQL refuses too
        gh.comments[0] |= {"body": f"{marker('k')}\nold", "user": BOT}
        code, err = _comment(tmp_path, "new\n", gh.env(_event(tmp_path)), "--comment-key", "k")
        assert (code, err) == (0, "updated pull-request comment 100\n")


def test_two_jobs_of_one_pull_request_keep_a_comment_each(tmp_path: Path) -> None:
    # a matrix over environments posting the same report.md: each with its own key,
    # shown above its report; each run updates its own comment, never the other's
    with FakeGitHub() as gh:
        env = gh.env(_event(tmp_path))
        for key, text, said in (
            ("prod", "prod plan\n", "created pull-request comment 101\n"),
            ("staging", "staging plan\n", "created pull-request comment 102\n"),
            ("prod", "prod plan 2\n", "updated pull-request comment 101\n"),
            ("staging", "staging plan 2\n", "updated pull-request comment 102\n"),
        ):
            assert _comment(tmp_path, text, env, "--comment-key", key) == (0, said)
        assert [c["body"] for c in gh.comments[1:]] == [
            f"{marker('prod')}\n<sub>prod</sub>\n\nprod plan 2\n",
            f"{marker('staging')}\n<sub>staging</sub>\n\nstaging plan 2\n",
        ]


def test_a_key_is_never_shown_raw_in_the_marker(tmp_path: Path) -> None:
    # the marker is an HTML comment: "-->" in a key must not end it early
    with FakeGitHub() as gh:
        key = "a --> b <script>"
        code, _ = _comment(tmp_path, "x\n", gh.env(_event(tmp_path)), "--comment-key", key)
        assert code == 0
        body = gh.comments[-1]["body"]
    first, label = body.splitlines()[:2]
    assert first == marker(key) and first.count("-->") == 1
    assert label == "<sub>a --&gt; b &lt;script&gt;</sub>"


def _post(path: str, text: str, cwd: Path, env: dict[str, str]) -> tuple[int, str]:
    (cwd / path).write_text(text)
    res = run_cmhash(["github-comment", path], cwd=cwd, env=env)
    return res.code, res.stderr


def test_the_default_key_is_the_files_path_in_the_repository(tmp_path: Path) -> None:
    # a monorepo: a job per directory cds into it and posts report.md; each keeps its
    # own comment, however the file is named and wherever the workspace is checked out
    ws = tmp_path / "work" / "deploy"
    (ws / "sub").mkdir(parents=True)
    (tmp_path / "link").symlink_to(ws)
    with FakeGitHub() as gh:
        env = gh.env(_event(tmp_path), GITHUB_WORKSPACE=str(ws))
        assert _post("report.md", "root\n", ws, env) == (0, "created pull-request comment 101\n")
        said = _post("report.md", "sub\n", ws / "sub", env)
        assert said == (0, "created pull-request comment 102\n")
        for name, cwd in (
            ("./report.md", ws),
            (str(ws / "report.md"), tmp_path),
            (str(tmp_path / "link" / "report.md"), tmp_path),
            ("../report.md", ws / "sub"),
        ):
            assert _post(name, "root again\n", cwd, env) == (
                0,
                "updated pull-request comment 101\n",
            ), name
        assert _post("sub/report.md", "sub 2\n", ws, env)[1] == "updated pull-request comment 102\n"
        assert [c["body"] for c in gh.comments[1:]] == [
            f"{marker('report.md')}\nroot again\n",
            f"{marker('sub/report.md')}\nsub 2\n",
        ]
    # the next pipeline, checked out elsewhere: the same keys
    other = tmp_path / "builds" / "7" / "deploy"
    (other / "sub").mkdir(parents=True)
    with FakeGitHub() as gh:
        gh.comments[0] |= {"body": f"{marker('sub/report.md')}\nsub 2\n", "user": BOT}
        env = gh.env(_event(tmp_path), GITHUB_WORKSPACE=str(other))
        assert _post("report.md", "sub 3\n", other / "sub", env)[1] == (
            "updated pull-request comment 100\n"
        )


def test_without_a_workspace_the_git_top_level_is_the_root(tmp_path: Path) -> None:
    import subprocess

    repo = tmp_path / "repo"
    (repo / "apps" / "shop").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    with FakeGitHub() as gh:
        env = gh.env(_event(tmp_path))
        assert _post("report.md", "x\n", repo / "apps" / "shop", env)[0] == 0
        # outside any repository: the whole resolved path
        assert _post("report.md", "y\n", tmp_path, env)[0] == 0
        assert [c["body"].splitlines()[0] for c in gh.comments[1:]] == [
            marker("apps/shop/report.md"),
            marker(str((tmp_path / "report.md").resolve())),
        ]
