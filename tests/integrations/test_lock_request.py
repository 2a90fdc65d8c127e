"""``cmhash lock-request`` against fake GitLab and GitHub APIs (tests/fakeforge.py): a
changed lock opens one request from its branch (the target plus one commit), a later
run updates that request's description, a current lock opens nothing; the token is never
shown, even when the forge refuses it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import run_cmhash
from fakeforge import FakeGitHubRepo, FakeGitLabRepo, Repo

LOCK = '{\n  "cmhashLock": 1,\n  "objects": []\n}\n'
NEW = LOCK.replace(
    "[]",
    '[{"kind": "Secret", "namespace": "shop", "name": "db", "from": "Secret shop/db", '
    '"field": "data", "fingerprint": "' + "a" * 64 + '"}]',
)


def _run(tmp: Path, forge: str, env: dict[str, str], lock: str, plan: str) -> tuple[int, str]:
    (tmp / "cmhash.lock").write_text(lock)
    (tmp / "plan.md").write_text(plan)
    res = run_cmhash(
        ["lock-request", "cmhash.lock", "--forge", forge, "--description", "plan.md"],
        cwd=tmp,
        env=env,
    )
    return res.code, res.stderr


@pytest.mark.parametrize("forge", ["gitlab", "github"])
def test_a_changed_lock_opens_then_updates_one_request(tmp_path: Path, forge: str) -> None:
    repo = Repo({"cmhash.lock": LOCK, "app.yaml": "kind: Deployment\n"})
    server = FakeGitLabRepo(repo) if forge == "gitlab" else FakeGitHubRepo(repo)
    with server:
        env = server.env()
        code, err = _run(tmp_path, forge, env, LOCK, "# nothing\n")
        assert code == 0, err
        assert "is current: no" in err
        assert "cmhash/lock" not in repo.branches
        code, err = _run(tmp_path, forge, env, NEW, "# plan 1\n")
        assert code == 0, err
        assert "opened" in err
        branch = repo.files("cmhash/lock")
        assert branch == {"cmhash.lock": NEW, "app.yaml": "kind: Deployment\n"}
        requests = server.mrs if isinstance(server, FakeGitLabRepo) else server.pulls
        assert len(requests) == 1
        text = requests[0].get("description", requests[0].get("body"))
        assert text == "# plan 1\n"
        # the store rotated again before anyone merged: the same request, a new plan
        code, err = _run(tmp_path, forge, env, NEW.replace("aaaa", "bbbb"), "# plan 2\n")
        assert code == 0, err
        assert "updated" in err
        assert len(requests) == 1
        assert requests[0].get("description", requests[0].get("body")) == "# plan 2\n"
        assert repo.files("cmhash/lock")["cmhash.lock"] == NEW.replace("aaaa", "bbbb")  # type: ignore[index]
        assert repo.files("main") == {"cmhash.lock": LOCK, "app.yaml": "kind: Deployment\n"}


@pytest.mark.parametrize("forge", ["gitlab", "github"])
def test_a_first_lock_is_created_and_the_token_never_shown(tmp_path: Path, forge: str) -> None:
    repo = Repo({"app.yaml": "kind: Deployment\n"})
    server = FakeGitLabRepo(repo) if forge == "gitlab" else FakeGitHubRepo(repo)
    with server:
        env = server.env()
        code, err = _run(tmp_path, forge, env, NEW, "# first\n")
        assert code == 0, err
        assert repo.files("cmhash/lock") == {"cmhash.lock": NEW, "app.yaml": "kind: Deployment\n"}
        variable = "CMHASH_GITLAB_TOKEN" if forge == "gitlab" else "GITHUB_TOKEN"
        bad = {**env, variable: "wrong-token-1234567890"}
        code, err = _run(tmp_path, forge, bad, NEW.replace("aaaa", "cccc"), "# x\n")
        assert code == 2
        assert "HTTP 401" in err and "wrong-token-1234567890" not in err
        assert env[variable] not in err


# what a kubectl export looks like (a List with a Secret): never sent, as LOCK or as the plan
EXPORT = """apiVersion: v1
items:
- apiVersion: v1
  data:
    password: Q25yeS1kYi1wYXNzLVE3eDlaMg==
  kind: Secret
  metadata:
    name: db
    namespace: shop
    resourceVersion: "1000"
  type: Opaque
kind: List
metadata:
  resourceVersion: ""
"""


@pytest.mark.parametrize("forge", ["gitlab", "github"])
def test_an_export_given_as_lock_or_plan_is_refused_and_nothing_sent(
    tmp_path: Path, forge: str
) -> None:
    repo = Repo({"app.yaml": "kind: Deployment\n"})
    server = FakeGitLabRepo(repo) if forge == "gitlab" else FakeGitHubRepo(repo)
    with server:
        env = server.env()
        code, err = _run(tmp_path, forge, env, EXPORT, "# plan\n")
        assert code == 2, err
        assert "cmhash.lock:1:1: not a cmhash lock file" in err
        assert "Q25y" not in err
        code, err = _run(tmp_path, forge, env, NEW, EXPORT)
        assert code == 2, err
        assert "plan.md: holds a Kubernetes Secret with data" in err
        # pasted into a Markdown plan, in a code block or as JSON
        fenced = "# plan\n\n```yaml\n" + EXPORT + "```\n"
        as_json = '# plan\n{"kind": "Secret", "data": {"password": "Q25y"}}\n'
        for plan in (fenced, as_json):
            code, err = _run(tmp_path, forge, env, NEW, plan)
            assert code == 2 and "holds a Kubernetes Secret" in err, err
        assert server.requests == []
        assert repo.branches == {"main": repo.branches["main"]}


def _server(forge: str, repo: Repo) -> FakeGitLabRepo | FakeGitHubRepo:
    return FakeGitLabRepo(repo) if forge == "gitlab" else FakeGitHubRepo(repo)


def _requests(server: FakeGitLabRepo | FakeGitHubRepo) -> list[dict[str, Any]]:
    return server.mrs if isinstance(server, FakeGitLabRepo) else server.pulls


def _writes(server: FakeGitLabRepo | FakeGitHubRepo) -> list[str]:
    """What moved a branch or wrote a commit."""
    return [
        f"{m} {p}"
        for m, p, *_ in server.requests
        if m != "GET" and ("/repository/commits" in p or "/git/" in p or "/contents/" in p)
    ]


@pytest.mark.parametrize("forge", ["gitlab", "github"])
def test_the_target_or_a_branch_cmhash_did_not_write_is_never_reset(
    tmp_path: Path, forge: str
) -> None:
    repo = Repo({"cmhash.lock": LOCK, "README": "x\n"})
    main = repo.branches["main"]
    repo.branches["develop"] = repo.commit(
        {"cmhash.lock": LOCK, "README": "x\n", "feature.txt": "work\n"}, main, "feature"
    )
    develop = repo.branches["develop"]
    with _server(forge, repo) as server:
        for branch, said in (
            ("main", "--branch main is the target branch"),
            ("develop", "branch develop holds 1 commit(s) on top of main that cmhash"),
        ):
            (tmp_path / "cmhash.lock").write_text(NEW)
            (tmp_path / "plan.md").write_text("# plan\n")
            args = ["lock-request", "cmhash.lock", "--forge", forge, "--branch", branch]
            res = run_cmhash(
                [*args, "--description", "plan.md"],
                cwd=tmp_path,
                env=server.env(),
            )
            assert res.code == 2 and said in res.stderr, res.stderr
        assert _writes(server) == []
        assert repo.branches == {"main": main, "develop": develop}
        assert _requests(server) == []


@pytest.mark.parametrize("forge", ["gitlab", "github"])
def test_an_unchanged_lock_is_no_new_commit_and_a_new_plan_only_a_new_description(
    tmp_path: Path, forge: str
) -> None:
    repo = Repo({"cmhash.lock": LOCK})
    with _server(forge, repo) as server:
        env = server.env()
        assert _run(tmp_path, forge, env, NEW, "# plan 1\n")[0] == 0
        head, pushed = repo.branches["cmhash/lock"], len(_writes(server))
        code, err = _run(tmp_path, forge, env, NEW, "# plan 1\n")
        assert code == 0 and "is up to date: nothing pushed" in err, err
        code, err = _run(tmp_path, forge, env, NEW, "# plan 1, again\n")
        assert code == 0 and "updated" in err, err
        assert repo.branches["cmhash/lock"] == head
        assert len(_writes(server)) == pushed
        (request,) = _requests(server)
        assert request.get("description", request.get("body")) == "# plan 1, again\n"
        # the target moved on (another file): the lock's commit stays as it is
        main = repo.branches["main"]
        repo.branches["main"] = repo.commit({"cmhash.lock": LOCK, "x": "y\n"}, main, "other")
        assert _run(tmp_path, forge, env, NEW, "# plan 1, again\n")[0] == 0
        assert repo.branches["cmhash/lock"] == head
        # ... until the target's lock itself moved: then on top of the target again
        main = repo.branches["main"]
        moved = LOCK.replace("[]", "[ ]")
        repo.branches["main"] = repo.commit({"cmhash.lock": moved, "x": "y\n"}, main, "by hand")
        assert _run(tmp_path, forge, env, NEW, "# plan 1, again\n")[0] == 0
        assert repo.parents[repo.branches["cmhash/lock"]] == repo.branches["main"]


def test_github_a_new_lock_never_moves_the_pull_request_head_to_the_base(tmp_path: Path) -> None:
    """Each run builds the commit on the base first, then moves the branch once: a head the
    base holds would make GitHub mark the open pull request merged (and a new one open)."""
    repo = Repo({"cmhash.lock": LOCK})
    with FakeGitHubRepo(repo) as server:
        env = server.env()
        assert _run(tmp_path, "github", env, NEW, "# plan 1\n")[0] == 0
        code, err = _run(tmp_path, "github", env, NEW.replace("aaaa", "bbbb"), "# plan 2\n")
        assert code == 0 and "updated pull request #1" in err, err
        (pull,) = server.pulls
        assert pull["state"] == "open" and not pull.get("merged")
        assert [
            m for m, p, *_ in server.requests if p.endswith("/git/refs/heads/cmhash/lock")
        ].count("PATCH") == 1
        sha = repo.branches["cmhash/lock"]
        assert repo.parents[sha] == repo.branches["main"]
        assert repo.files(sha) == {"cmhash.lock": NEW.replace("aaaa", "bbbb")}


@pytest.mark.parametrize("forge", ["gitlab", "github"])
def test_a_lock_current_again_closes_the_stale_request(tmp_path: Path, forge: str) -> None:
    repo = Repo({"cmhash.lock": LOCK})
    with _server(forge, repo) as server:
        env = server.env()
        assert _run(tmp_path, forge, env, NEW, "# 1 workload will restart\n")[0] == 0
        code, err = _run(tmp_path, forge, env, LOCK, "# nothing\n")
        assert code == 0, err
        assert "is current: closed the stale" in err
        (request,) = _requests(server)
        assert request["state"] == "closed"
        assert "Superseded" in request.get("description", request.get("body", ""))
        # and the next rotation opens a new one on the same branch
        code, err = _run(tmp_path, forge, env, NEW, "# again\n")
        assert code == 0 and "opened" in err, err
        assert len(_requests(server)) == 2


@pytest.mark.parametrize("forge", ["gitlab", "github"])
def test_the_lock_s_repository_path_is_relative_to_the_checkout(tmp_path: Path, forge: str) -> None:
    """An absolute LOCK inside the checkout is its path there; one outside it, or a
    --path outside it, is refused: never sent as a repository path."""
    repo = Repo({"README": "x\n"})
    checkout = tmp_path / "checkout"
    (checkout / "deploy").mkdir(parents=True)
    (checkout / "deploy" / "cmhash.lock").write_text(NEW)
    (tmp_path / "outside.lock").write_text(NEW)
    (checkout / "plan.md").write_text("# plan\n")
    with _server(forge, repo) as server:
        job = "CI_PROJECT_DIR" if forge == "gitlab" else "GITHUB_WORKSPACE"
        env = server.env(**{job: str(checkout)})

        def run(lock: str, *more: str) -> tuple[int, str]:
            args = ["lock-request", lock, "--forge", forge, "--description", "plan.md", *more]
            res = run_cmhash(args, cwd=checkout, env=env)
            return res.code, res.stderr

        for lock, more, said in (
            (str(tmp_path / "outside.lock"), (), "is outside the repository"),
            ("../outside.lock", (), "is outside the repository"),
            ("deploy/cmhash.lock", ("--path", "../x.lock"), "--path ../x.lock: give the lock"),
            ("deploy/cmhash.lock", ("--path", "/x.lock"), "--path /x.lock: give the lock"),
        ):
            code, err = run(lock, *more)
            assert code == 2 and said in err, err
        assert server.requests == []
        code, err = run(str(checkout / "deploy" / "cmhash.lock"))
        assert code == 0, err
        assert repo.files("cmhash/lock") == {"README": "x\n", "deploy/cmhash.lock": NEW}


class _Protected(FakeGitLabRepo):
    def _commit(self, match: Any, body: Any) -> Any:
        return 403, {"message": "403 Forbidden - You are not allowed to push into this branch"}


class _Conflict(FakeGitLabRepo):
    def _create(self, match: Any, body: Any) -> Any:
        return 409, {
            "message": ["Another open merge request already exists for this source branch: !3"]
        }


class _NoPulls(FakeGitHubRepo):
    def _create(self, match: Any, body: Any) -> Any:
        return 403, {
            "message": "GitHub Actions is not permitted to create or approve pull requests.",
            "documentation_url": "https://docs.github.com/rest/pulls/pulls#create-a-pull-request",
        }


def test_a_forge_s_refusal_is_said_in_its_own_words(tmp_path: Path) -> None:
    """Not replaced by advice on the token's scope (that is for 401 only)."""
    repo = Repo({"README": "x\n"})
    with _Protected(repo) as server:
        code, err = _run(tmp_path, "gitlab", server.env(), NEW, "# plan\n")
        assert code == 2 and err.count("\n") == 1, err
        assert "HTTP 403 Forbidden: GitLab says '403 Forbidden - You are not allowed to push" in err
        assert "scope" not in err
    with _Conflict(repo) as server:
        code, err = _run(tmp_path, "gitlab", server.env(), NEW, "# plan\n")
        assert "HTTP 409 Conflict: GitLab says 'Another open merge request already exists" in err
    with _NoPulls(Repo({"README": "x\n"})) as gh:
        code, err = _run(tmp_path, "github", gh.env(), NEW, "# plan\n")
        assert code == 2, err
        assert "GitHub says 'GitHub Actions is not permitted to create or approve pull" in err
        assert "permissions" not in err
