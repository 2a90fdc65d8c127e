"""``cmhash lock-request`` against fake GitLab and GitHub APIs (tests/fakeforge.py): a
changed lock opens one request from its branch (the target plus one commit), a later
run updates that request's description, a current lock opens nothing; the token is never
shown, even when the forge refuses it."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cmhash
from fakeforge import FakeGitHubRepo, FakeGitLabRepo, Repo

LOCK = '{\n  "cmhashLock": 1,\n  "objects": []\n}\n'
NEW = LOCK.replace("[]", '[{"kind": "Secret"}]')


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
        code, err = _run(tmp_path, forge, env, NEW.replace("Secret", "ConfigMap"), "# plan 2\n")
        assert code == 0, err
        assert "updated" in err
        assert len(requests) == 1
        assert requests[0].get("description", requests[0].get("body")) == "# plan 2\n"
        assert repo.files("cmhash/lock")["cmhash.lock"] == NEW.replace("Secret", "ConfigMap")  # type: ignore[index]
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
        code, err = _run(tmp_path, forge, bad, NEW.replace("Secret", "X"), "# x\n")
        assert code == 2
        assert "HTTP 401" in err and "wrong-token-1234567890" not in err
        assert env[variable] not in err
