"""--jobs=rename (analyze/jobs.py): a Job that uses in-stream config runs again under a
new name when its template or config changes, keeps its name otherwise, and a second run
recognises its own suffix."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import ROOT, run_cmhash

CASE = ROOT / "tests" / "cases" / "job-rename" / "input.yaml"
NAME = re.compile(r"(?m)^  name: (migrate-[2-9b-t]{10})\b")


def _run(text: str, *args: str) -> str:
    res = run_cmhash(["--no-config", "--jobs=rename", *args, "-"], stdin=text.encode())
    assert res.code == 0, res.stderr
    return res.out


def _name(out: str) -> str:
    found = NAME.findall(out)
    assert len(found) == 1, out
    return found[0]


TEXT = CASE.read_text()


@pytest.mark.parametrize(
    ("change", "runs_again"),
    [
        (("TARGET: v42", "TARGET: v43"), True),  # the config it reads
        (
            ("image: shop:1.0\n        envFrom", "image: shop:1.1\n        envFrom"),
            True,
        ),  # template
        (
            (
                "restartPolicy: Never\n      containers:\n      - name: migrate",
                "restartPolicy: OnFailure\n      containers:\n      - name: migrate",
            ),
            True,
        ),
        (("# the schema migration", "# the migration"), False),  # a comment
        (("labels: {app: shop}", "labels: {app: store}"), False),  # the Job's own labels
        (('schedule: "0 3 * * *"', 'schedule: "0 4 * * *"'), False),  # another object
    ],
)
def test_a_new_name_exactly_when_template_or_config_changes(
    change: tuple[str, str], runs_again: bool
) -> None:
    assert change[0] in TEXT
    before = _name(_run(TEXT))
    after = _name(_run(TEXT.replace(*change)))
    assert (after != before) is runs_again


def test_idempotent_and_the_suffix_replaced_not_stacked() -> None:
    once = _run(TEXT)
    assert _run(once) == once
    changed = _run(once.replace("TARGET: v42", "TARGET: v43"))
    assert _name(changed) == _name(_run(TEXT.replace("TARGET: v42", "TARGET: v43")))
    assert changed.count("cmhash.io/job-base-name") == 2  # one per renamed Job, not stacked


def test_names_stay_within_63_characters() -> None:
    out = _run(TEXT)
    long = re.search(r'(?m)^  name: "(seed-[^"]+)"', out)
    assert long is not None
    assert len(long.group(1)) == 63 and long.group(1)[-12:-11] not in "-."


def test_hook_and_cronjob_are_not_renamed() -> None:
    out = _run(TEXT)
    assert "  name: pre-upgrade-check\n" in out and "  name: nightly\n" in out
    res = run_cmhash(["--no-config", "--jobs=rename", str(CASE)])
    assert "[job-not-renamed]" in res.stderr


def test_without_rename_jobs_keep_their_names() -> None:
    for args in (["--jobs"], ["--jobs=annotate"], []):
        res = run_cmhash(["--no-config", *args, "-"], stdin=TEXT.encode())
        assert res.code == 0 and "  name: migrate   #" in res.out, args
    assert (
        run_cmhash(["--no-config", "--jobs", "-"], stdin=TEXT.encode()).out
        == run_cmhash(["--no-config", "--jobs=annotate", "-"], stdin=TEXT.encode()).out
    )


def test_jobs_flag_still_takes_a_path_after_it(tmp_path: Path) -> None:
    (tmp_path / "k8s").mkdir()
    (tmp_path / "k8s" / "all.yaml").write_text(TEXT)
    res = run_cmhash(["--no-config", "--jobs", "k8s"], cwd=tmp_path)
    assert res.code == 0, res.stderr


def test_config_file_jobs_rename(tmp_path: Path) -> None:
    (tmp_path / ".cmhash.yaml").write_text("jobs: rename\n")
    (tmp_path / "all.yaml").write_text(TEXT)
    res = run_cmhash(["all.yaml"], cwd=tmp_path)
    assert res.code == 0 and _name(res.out) == _name(_run(TEXT))
    (tmp_path / ".cmhash.yaml").write_text("jobs: renamed\n")
    bad = run_cmhash(["all.yaml"], cwd=tmp_path)
    assert bad.code == 2 and ".cmhash.yaml" in bad.stderr


def test_check_and_in_place(tmp_path: Path) -> None:
    f = tmp_path / "all.yaml"
    f.write_text(TEXT)
    assert run_cmhash(["--no-config", "--jobs=rename", "--check", str(f)]).code == 1
    assert run_cmhash(["--no-config", "--jobs=rename", "-i", str(f)]).code == 0
    assert run_cmhash(["--no-config", "--jobs=rename", "--check", str(f)]).code == 0
    assert f.read_text() == _run(TEXT)


def test_both_parsers_agree() -> None:
    assert _run(TEXT, "--parser", "exact") == _run(TEXT)


def test_explain_says_the_new_name() -> None:
    import jsonschema

    res = run_cmhash(["explain", "--no-config", "--jobs=rename", "--format", "json", str(CASE)])
    data = json.loads(res.out)
    schema = json.loads((ROOT / "src/cmhash/schemas/explain.schema.json").read_text())
    jsonschema.validate(data, schema)
    migrate = next(w for w in data["workloads"] if w["name"] == "migrate")
    assert migrate["runsAgainAs"] == _name(_run(TEXT))
    text = run_cmhash(["explain", "--no-config", "--jobs=rename", str(CASE)]).out
    assert f"runs again as {migrate['runsAgainAs']} (--jobs=rename)" in text


@pytest.mark.slow
def test_workers_carry_the_rename() -> None:
    """A big input: forked workers send each Job's rename back (transport)."""
    parts = [
        TEXT.replace("name: migrate", f"name: migrate{i}").replace(
            "migrate-config", f"migrate-config{i}"
        )
        for i in range(3200)
    ]
    text = "---\n".join(parts)
    assert len(text) > 4 << 20
    one = run_cmhash(["--no-config", "--jobs=rename", "--workers", "1", "-"], stdin=text.encode())
    two = run_cmhash(["--no-config", "--jobs=rename", "--workers", "2", "-"], stdin=text.encode())
    assert one.code == two.code == 0 and one.stdout == two.stdout
    assert one.out.count("cmhash.io/job-base-name") == 2 * 3200


def test_two_jobs_never_share_a_name() -> None:
    """Bases alike in their first 52 characters, the same template: two names."""
    job = TEXT.split("---\n")[2]
    a = job.replace(
        'name: "seed-the-catalogue-with-the-products-of-the-spring-collection"',
        'name: "' + "b" * 60 + 'x"',
    )
    b = job.replace(
        'name: "seed-the-catalogue-with-the-products-of-the-spring-collection"',
        'name: "' + "b" * 60 + 'y"',
    )
    out = _run("---\n".join([TEXT.split("---\n")[0], a, b]))
    names = re.findall(r'(?m)^  name: "(b+-[2-9b-t]{10})"', out)
    assert len(names) == 2 and names[0] != names[1]


def test_a_job_renamed_by_hand_takes_its_new_name_as_base() -> None:
    once = _run(TEXT)
    renamed = re.sub(r"(?m)^  name: migrate-[2-9b-t]{10}", "  name: schema-migrate", once)
    out = _run(renamed)
    assert re.search(r"(?m)^  name: schema-migrate-[2-9b-t]{10}", out)
    assert 'cmhash.io/job-base-name: "schema-migrate"' in out


def test_patches_refuse_jobs_rename() -> None:
    res = run_cmhash(["patches", "--no-config", "--jobs=rename", str(CASE)])
    assert res.code == 2 and "cannot express --jobs=rename as patches" in res.stderr


CONTRADICTIONS = [
    ("--jobs=rename", "--no-jobs"),
    ("--no-jobs", "--rename-jobs"),
    ("--jobs=annotate", "--jobs=rename"),
    ("--rename-jobs", "--jobs=annotate"),
    ("--jobs", "--no-jobs"),
    ("--no-jobs", "--jobs=annotate"),
]


@pytest.mark.parametrize(("first", "second"), CONTRADICTIONS)
@pytest.mark.parametrize("command", [[], ["explain"], ["report", str(CASE)]])
def test_contradictory_job_options_are_a_usage_error(
    first: str, second: str, command: list[str]
) -> None:
    """Two Job options asking for different modes: exit 2, one line naming both (before,
    the last one silently won)."""
    res = run_cmhash([*command, "--no-config", first, second, str(CASE)])
    assert res.code == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and first in lines[0] and second in lines[0], res.stderr
    assert "Traceback" not in res.stderr


def test_compatible_job_options_and_an_unknown_mode() -> None:
    assert run_cmhash(["--no-config", "--jobs", "--jobs=rename", str(CASE)]).code == 0
    assert run_cmhash(["--no-config", "--jobs=rename", "--jobs=rename", str(CASE)]).code == 0
    res = run_cmhash(["--no-config", "--jobs=renamed", str(CASE)])
    assert res.code == 2 and "--jobs=renamed: use --jobs, --jobs=annotate" in res.stderr
    # after "--" a word is a path, not an option
    assert "contradict" not in run_cmhash(["--no-config", "--no-jobs", "--", "--jobs"]).stderr


@pytest.mark.parametrize(
    ("config", "flag", "renamed", "annotated"),
    [
        ("jobs: rename", "--jobs=annotate", False, True),
        ("jobs: rename", "--no-jobs", False, False),
        ("jobs: rename", "--jobs", True, True),
        ("jobs: false", "--jobs=rename", True, True),
        ("jobs: true", "--jobs=rename", True, True),
        ("jobs: true", "--no-jobs", False, False),
    ],
)
def test_the_command_line_wins_over_the_config_file(
    tmp_path: Path, config: str, flag: str, renamed: bool, annotated: bool
) -> None:
    """As for every other setting (settings.layered): config < command line; the two
    are no contradiction. A plain --jobs keeps the configured mode."""
    (tmp_path / ".cmhash.yaml").write_text(config + "\n")
    (tmp_path / "all.yaml").write_text(TEXT)
    res = run_cmhash([flag, "all.yaml"], cwd=tmp_path)
    assert res.code == 0, res.stderr
    assert bool(NAME.findall(res.out)) is renamed
    job = res.out.split("kind: Job", 1)[1].split("\n---", 1)[0]
    assert ("checksum/config" in job) is annotated


def test_verbose_says_when_the_command_line_overrides_jobs_in_the_config(tmp_path: Path) -> None:
    (tmp_path / ".cmhash.yaml").write_text("jobs: rename\n")
    (tmp_path / "all.yaml").write_text(TEXT)
    res = run_cmhash(["-v", "--jobs=annotate", "all.yaml"], cwd=tmp_path)
    assert "jobs: rename is overridden by the command line (Jobs: true)" in res.stderr
    same = run_cmhash(["-v", "--jobs", "all.yaml"], cwd=tmp_path)
    assert "overridden" not in same.stderr
    quiet = run_cmhash(["--no-jobs", "all.yaml"], cwd=tmp_path)
    assert "overridden" not in quiet.stderr
