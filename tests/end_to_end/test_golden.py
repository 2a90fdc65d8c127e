"""Golden cases: tests/cases/<name>/input.yaml (+ args.txt) -> expected.yaml or error.txt.

No expected.yaml and no error.txt means "output equals input". stderr.txt, when
present, must equal the findings printed. A config.yaml is used as the configuration
file (``--config config.yaml``); an env.txt holds NAME=VALUE lines of the environment.
Regenerate with --update-goldens and review with git
diff.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from conftest import TESTS, run_cmhash

CASES = TESTS / "cases"
NAMES = sorted(p.name for p in CASES.iterdir() if (p / "input.yaml").exists())


def _args(case: Path) -> list[str]:
    f = case / "args.txt"
    return shlex.split(f.read_text()) if f.exists() else []


def _input_name(case: Path) -> str:
    f = case / "input-name.txt"
    return f.read_text().strip() if f.exists() else "input.yaml"


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("parser", ["fast", "exact"])
def test_case(name: str, parser: str, update_goldens: bool, tmp_path: Path) -> None:
    case = CASES / name
    data = (case / "input.yaml").read_bytes()
    input_name = _input_name(case)
    (tmp_path / input_name).write_bytes(data)
    config = ["--no-config"]
    if (case / "config.yaml").exists():
        (tmp_path / "config.yaml").write_bytes((case / "config.yaml").read_bytes())
        config = ["--config", "config.yaml"]
    args = [*config, "--parser", parser, *_args(case), input_name]
    env_file = case / "env.txt"
    env = (
        dict(line.split("=", 1) for line in env_file.read_text().splitlines() if line)
        if env_file.exists()
        else None
    )
    res = run_cmhash(args, cwd=tmp_path, env=env)
    expected, error, stderr = case / "expected.yaml", case / "error.txt", case / "stderr.txt"
    if update_goldens and parser == "fast":
        if res.code == 2:
            error.write_text(res.stderr)
            expected.unlink(missing_ok=True)
        else:
            error.unlink(missing_ok=True)
            if res.stdout != data:
                expected.write_bytes(res.stdout)
            else:
                expected.unlink(missing_ok=True)
            if res.stderr:
                stderr.write_text(res.stderr)
            else:
                stderr.unlink(missing_ok=True)
    if error.exists():
        assert res.code == 2, res.stderr
        assert res.stdout == b""
        assert res.stderr == error.read_text()
        assert (tmp_path / input_name).read_bytes() == data  # nothing modified
        return
    assert res.code == 0, res.stderr
    want = expected.read_bytes() if expected.exists() else data
    assert res.stdout == want
    assert res.stderr == (stderr.read_text() if stderr.exists() else "")
    # idempotence: cmhash on its own output changes nothing
    (tmp_path / input_name).write_bytes(res.stdout)
    again = run_cmhash(args, cwd=tmp_path, env=env)
    assert again.code == 0
    assert again.stdout == res.stdout
