"""cmhash gitlab-note: one note per merge request, created then updated, against a fake
GitLab API; clear one-line errors; the token never printed."""

from __future__ import annotations

from pathlib import Path

from conftest import run_cmhash
from fakegitlab import TOKEN, FakeGitLab

from cmhash.integrations.comments import MARKER, marker


def _note(tmp_path: Path, text: str, env: dict[str, str], *args: str) -> tuple[int, str]:
    f = tmp_path / "report.md"
    f.write_text(text)
    res = run_cmhash(["gitlab-note", str(f), *args], env=env)
    assert TOKEN not in res.stderr and TOKEN.encode() not in res.stdout
    return res.code, res.stderr


def test_creates_then_updates_one_note(tmp_path: Path) -> None:
    with FakeGitLab() as gl:
        code, err = _note(tmp_path, "### cmhash: 1 workload will restart\n", gl.env())
        assert (code, err) == (0, "created merge-request note 2\n")
        code, err = _note(tmp_path, "### cmhash: No workload will restart\n", gl.env())
        assert (code, err) == (0, "updated merge-request note 2\n")
        assert [n["body"] for n in gl.notes] == [
            "LGTM",
            f"{marker(str(tmp_path / 'report.md'))}\n### cmhash: No workload will restart\n",
        ]
        methods = [(m, p.split("?")[0]) for m, p, _ in gl.requests]
        assert methods == [
            ("GET", "/api/v4/projects/42/merge_requests/7/notes"),
            ("POST", "/api/v4/projects/42/merge_requests/7/notes"),
            ("GET", "/api/v4/projects/42/merge_requests/7/notes"),
            ("GET", "/api/v4/user"),  # a marker: whose note?
            ("PUT", "/api/v4/projects/42/merge_requests/7/notes/2"),
        ]


def test_wrong_token_is_one_clear_line(tmp_path: Path) -> None:
    with FakeGitLab() as gl:
        code, err = _note(tmp_path, "x", gl.env(CMHASH_GITLAB_TOKEN="glpat-wrong"))
    assert code == 2
    assert err == (
        "cmhash: GitLab API GET http://127.0.0.1:"
        f"{gl.url.split(':')[2].split('/')[0]}/api/v4/projects/42/merge_requests/"
        "7/notes: HTTP 401 Unauthorized (check the token's scope: api)\n"
    )


def test_not_a_merge_request_pipeline(tmp_path: Path) -> None:
    code, err = _note(
        tmp_path,
        "x",
        {
            "CI_API_V4_URL": "",
            "CI_PROJECT_ID": "",
            "CI_MERGE_REQUEST_IID": "",
            "CMHASH_GITLAB_TOKEN": TOKEN,
        },
    )
    assert code == 2
    assert "not a merge-request pipeline: CI_API_V4_URL, CI_PROJECT_ID, CI_MERGE_REQUEST_IID" in err


def test_missing_token_and_unreachable_api(tmp_path: Path) -> None:
    with FakeGitLab() as gl:
        code, err = _note(tmp_path, "x", gl.env(CMHASH_GITLAB_TOKEN=""))
        assert code == 2 and "CMHASH_GITLAB_TOKEN is empty or not set" in err
    env = gl.env()  # the server is gone now
    code, err = _note(tmp_path, "x", env)
    assert code == 2 and err.startswith("cmhash: GitLab API GET ") and err.count("\n") == 1


def test_missing_file(tmp_path: Path) -> None:
    res = run_cmhash(["gitlab-note", str(tmp_path / "nope.md")])
    assert res.code == 2 and "nope.md: No such file or directory" in res.stderr


def test_a_huge_report_is_cut_to_gitlab_limit(tmp_path: Path) -> None:
    with FakeGitLab() as gl:
        code, _ = _note(tmp_path, "| row |\n" * 200_000, gl.env())
        assert code == 0
        body = gl.notes[1]["body"]
    assert len(body) <= 1_000_000
    assert body.startswith(marker(str(tmp_path / "report.md")))
    assert body.endswith("(truncated: see the job's artifacts)\n")


def test_a_marker_in_someone_elses_note_is_never_updated(tmp_path: Path) -> None:
    # anyone can paste the marker into a note: GitLab refuses the token's update of it,
    # which failed the job (exit 2) on every later pipeline
    with FakeGitLab() as gl:
        gl.notes[0]["body"] = f"{MARKER}\nnot the bot's"
        code, err = _note(tmp_path, "### cmhash: 1 workload will restart\n", gl.env())
        assert (code, err) == (0, "created merge-request note 2\n")
        code, err = _note(tmp_path, "### cmhash: 2 workloads will restart\n", gl.env())
        assert (code, err) == (0, "updated merge-request note 2\n")
        assert gl.notes[0]["body"] == f"{MARKER}\nnot the bot's"


def test_two_jobs_keep_a_note_each(tmp_path: Path) -> None:
    # a matrix over environments: each job's note is its own (--comment-key, shown above
    # the report); a later pipeline updates each, never the other's
    with FakeGitLab() as gl:
        env = gl.env()
        assert _note(tmp_path, "prod plan\n", env, "--comment-key", "prod")[1] == (
            "created merge-request note 2\n"
        )
        assert _note(tmp_path, "staging plan\n", env, "--comment-key", "staging")[1] == (
            "created merge-request note 3\n"
        )
        assert _note(tmp_path, "prod plan 2\n", env, "--comment-key", "prod")[1] == (
            "updated merge-request note 2\n"
        )
        assert [n["body"] for n in gl.notes[1:]] == [
            f"{marker('prod')}\n<sub>prod</sub>\n\nprod plan 2\n",
            f"{marker('staging')}\n<sub>staging</sub>\n\nstaging plan\n",
        ]


def test_the_note_of_an_earlier_version_is_taken_over_once(tmp_path: Path) -> None:
    # a note this token posted with the marker of earlier versions (no key) is updated,
    # with this job's marker: no stale plan stays behind; a second job posts its own
    with FakeGitLab() as gl:
        gl.notes.append({"id": 2, "body": f"{MARKER}\nold plan", "author": {"id": 99}})
        env = gl.env()
        assert _note(tmp_path, "a\n", env, "--comment-key", "a")[1] == (
            "updated merge-request note 2\n"
        )
        assert _note(tmp_path, "b\n", env, "--comment-key", "b")[1] == (
            "created merge-request note 3\n"
        )
        assert gl.notes[1]["body"].startswith(marker("a") + "\n")


def test_the_default_key_is_the_files_path_in_the_project_dir(tmp_path: Path) -> None:
    # two jobs of a monorepo post their directory's report.md: a note each; the same
    # file by its absolute path is the same note
    project = tmp_path / "builds" / "shop" / "deploy"
    for d in ("prod", "staging"):
        (project / d).mkdir(parents=True)
        (project / d / "report.md").write_text(f"{d} plan\n")
    with FakeGitLab() as gl:
        env = gl.env(CI_PROJECT_DIR=str(project))
        said = [
            run_cmhash(["gitlab-note", name], cwd=cwd, env=env).stderr
            for name, cwd in (
                ("report.md", project / "prod"),
                ("report.md", project / "staging"),
                (str(project / "prod" / "report.md"), tmp_path),
            )
        ]
        assert said == [
            "created merge-request note 2\n",
            "created merge-request note 3\n",
            "updated merge-request note 2\n",
        ]
        assert [n["body"].splitlines()[0] for n in gl.notes[1:]] == [
            marker("prod/report.md"),
            marker("staging/report.md"),
        ]
