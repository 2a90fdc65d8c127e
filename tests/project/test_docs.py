"""The documentation: every ``console`` example is run and its output compared, the
reference pages and decision tables are generated from the code (and say everything the
code has), the strict build fails on a dead link, and no user document speaks of how
cmhash was developed. The built site itself: test_site.py."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

DOCS = ROOT / "docs"
USER_DOCS = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted(DOCS.rglob("*.md"))]
HOOKS = ROOT / "scripts" / "docs_hooks.py"


def _hooks():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("docs_hooks", HOOKS)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- examples -------------------------------------------------------------------------

FENCE = re.compile(r"^```console\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def _examples() -> list[tuple[str, str, str]]:
    """(id, command, expected output) for each ``$ `` line of every console block."""
    found = []
    for page in USER_DOCS:
        text = page.read_text(encoding="utf-8")
        for block in FENCE.finditer(text):
            line = text.count("\n", 0, block.start()) + 1
            command, output = None, []
            for row in block.group(1).splitlines():
                if row.startswith("$ "):
                    if command is not None:
                        found.append((f"{page.relative_to(ROOT)}:{line}", command, output))
                    command, output = row[2:], []
                else:
                    output.append(row)
            if command is not None:
                found.append((f"{page.relative_to(ROOT)}:{line}", command, output))
    return [(where, command, "\n".join(out)) for where, command, out in found]


EXAMPLES = _examples()


def test_the_docs_have_examples_to_run() -> None:
    assert len(EXAMPLES) >= 3


@pytest.mark.parametrize(("where", "command", "expected"), EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_console_example_prints_what_the_page_says(
    where: str, command: str, expected: str, tmp_path: Path
) -> None:
    """Run from a copy of the repository's examples, as a reader in a clone would."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.pop("CMHASH_LOG", None)
    done = subprocess.run(
        ["bash", "-c", command],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=60,
    )
    assert done.stdout.rstrip("\n") == expected, f"{where}: $ {command}"


# -- generated reference pages ---------------------------------------------------------


def test_cli_reference_holds_every_command_and_option() -> None:
    from cmhash.cli.main import cli

    page = _hooks().cli_reference()
    for name, command in cli.commands.items():
        assert f"## cmhash {name}" in page
        for param in command.params:
            for opt in getattr(param, "opts", []):
                if opt.startswith("-"):
                    assert opt in page, (name, opt)


def test_config_reference_holds_every_key() -> None:
    import json

    schema = json.loads((ROOT / "src/cmhash/schemas/config.schema.json").read_text())
    page = _hooks().config_reference()
    for key in schema["properties"]:
        assert f"| `{key}` |" in page


def test_findings_reference_holds_every_code() -> None:
    from cmhash.findings import CODES

    page = _hooks().findings_reference()
    for code, (level, _meaning) in CODES.items():
        assert f"| `{code.value}` | {level.value} |" in page


def test_decision_tables_are_generated_whole() -> None:
    """The rollout rules and the bare-Pod fields reach the report page without their
    citations and the "How cmhash decides" page with them; Reloader's rules in order."""
    from cmhash.knowledge.compat import RELOADER_RULES
    from cmhash.knowledge.podupdate import POD_FIELDS
    from cmhash.knowledge.rollout import RULES

    hooks = _hooks()
    user, cited = hooks.rollout_rules(), hooks.decides_rollout()
    for rule in RULES:
        assert f"| `{rule.name}` | {hooks._cell(rule.condition)} | {rule.outcome} |" in user
        assert rule.source not in user
        assert f"| `{rule.name}` | {rule.outcome} | {hooks._cell(rule.source)} |" in cited
    fields, cited_fields = hooks.pod_fields(), hooks.decides_pod_fields()
    for field in POD_FIELDS:
        assert f"| {field.field} |" in fields and field.source not in fields
        assert hooks._cell(field.source) in cited_fields
    from cmhash.knowledge.replicas import AUTOSCALERS

    counts, cited_counts = hooks.replicas(), hooks.decides_replicas()
    for a in AUTOSCALERS:
        assert f"| {a.kind} (`{a.group}`) |" in counts and a.source not in counts
        assert hooks._cell(a.source) in cited_counts
    assert "| every kind | `argocd-skip` |" in user
    reloader = hooks.decides_reloader().splitlines()[2:]
    assert [row.split("`")[1] for row in reloader][:-1] == [r.name for r in RELOADER_RULES]


def test_usage_lists_every_command() -> None:
    from cmhash.cli.main import cli

    listed = _hooks().commands_list()
    assert [line.split("`")[1] for line in listed.splitlines()] == sorted(
        cli.commands, key=lambda n: (n != "inject", n)
    )


def test_gfm_pipes_and_repository_links() -> None:
    hooks = _hooks()
    row = "| `web\\|db` | a \\| b |\n```\n| `x\\|y` |\n```"
    assert hooks.gfm_table_pipes(row) == "| `web|db` | a \\| b |\n```\n| `x\\|y` |\n```"
    md = "[t](../../ci-templates/argocd/plugin.yaml#L3) [p](../report.md) [w](https://x/y)"
    assert hooks.repository_links(md, "integrations/argocd.md") == (
        "[t](../files/ci-templates/argocd/plugin.yaml#L3) [p](../report.md) [w](https://x/y)"
    )


def test_every_marker_is_used_by_a_page() -> None:
    texts = "".join(p.read_text(encoding="utf-8") for p in DOCS.rglob("*.md"))
    hooks = _hooks()
    for marker in [*hooks.MARKERS, hooks.COMMANDS_MARKER]:
        assert marker in texts, marker


# -- user documents speak of the tool --------------------------------------------------

DIARY = re.compile(
    r"\bsession\b|\b20\d\d-\d\d-\d\d\b|\.\./shared|other tenants|\blab notes?\b",
    re.IGNORECASE,
)


@pytest.mark.parametrize("page", USER_DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_development_diary_in_user_documents(page: Path) -> None:
    for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        assert not DIARY.search(line), f"{page.relative_to(ROOT)}:{n}: {line}"


def test_every_page_is_in_the_navigation() -> None:
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for page in DOCS.rglob("*.md"):
        assert page.relative_to(DOCS).as_posix() in nav, page


# -- the site --------------------------------------------------------------------------


def test_strict_build_fails_on_a_dead_link(tmp_path: Path) -> None:
    """The link check is real: a page with a dead anchor fails the strict build."""
    if importlib.util.find_spec("mkdocs") is None:
        pytest.skip("mkdocs is not installed")
    shutil.copytree(DOCS, tmp_path / "docs")
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    config = config.replace("docs_dir: docs", f"docs_dir: {tmp_path / 'docs'}")
    config = config.replace("  - scripts/docs_hooks.py", f"  - {HOOKS}")
    (tmp_path / "mkdocs.yml").write_text(config, encoding="utf-8")
    faq = tmp_path / "docs" / "faq.md"
    faq.write_text(faq.read_text() + "\nSee [nowhere](install.md#no-such-heading).\n")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "out")],
        cwd=tmp_path,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode != 0 and "no-such-heading" in done.stderr


@pytest.mark.shared("bench", "make_stream.py")
def test_the_shipped_benchmark_generator_is_the_canonical_one() -> None:
    """The performance page's command works from a clone: bench/make_stream.py is the
    canonical generator, byte for byte."""
    from conftest import SHARED

    shipped = (ROOT / "bench" / "make_stream.py").read_bytes()
    assert shipped == (SHARED / "bench" / "make_stream.py").read_bytes()


@pytest.mark.parametrize(
    "name", ["README.md", "CONTRIBUTING.md", "ARCHITECTURE.md", "CHANGELOG.md"]
)
def test_repository_documents_link_to_files_that_exist(name: str) -> None:
    """Relative links of the documents GitLab renders from the repository (anchors
    are not used there: GitLab's heading ids differ from MkDocs')."""
    text = (ROOT / name).read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        assert "#" not in target, f"{name}: anchor link {target}"
        assert (ROOT / target).exists(), f"{name}: {target}"


def test_readme_is_short() -> None:
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 150


def test_the_report_pages_example_is_the_real_output() -> None:
    """docs/report.md quotes the fixture's report, abridged: every quoted line (but the
    ellipses) is a line of tests/fixtures/report/expected.md, so the quote cannot go stale."""
    page = (ROOT / "docs" / "report.md").read_text(encoding="utf-8")
    start = page.index("Example (`cd tests/fixtures/report && cmhash report old.yaml new.yaml`")
    quoted = []
    for line in page[start:].splitlines()[2:]:
        if not line.startswith(">"):
            break
        quoted.append(line[1:].strip())
    expected = {
        line.strip()
        for line in (ROOT / "tests/fixtures/report/expected.md").read_text("utf-8").splitlines()
    }
    shown = [q for q in quoted if q and "…" not in q]
    assert len(shown) > 10
    assert [q for q in shown if q not in expected] == []


def test_the_budgets_are_documented_where_users_look() -> None:
    """Every exit-1 budget is in the exit-codes reference; every input of the GitLab
    report template is in its page's inputs list; ci-report --help describes each
    verdict option as report --help does."""
    import re

    from click.testing import CliRunner

    from cmhash.cli.main import cli

    codes = (ROOT / "docs" / "reference" / "exit-codes.md").read_text()
    for opt in ("--max-restarts", "--max-surge-cpu", "--max-surge-memory", "--no-downtime"):
        assert opt in codes, opt
    template = (ROOT / "ci-templates" / "gitlab" / "cmhash-report.yml").read_text()
    spec = template.split("\n---", 1)[0]
    inputs = re.findall(r"^    ([a-z][a-z-]*):$", spec, re.M)
    page = (ROOT / "docs" / "integrations" / "gitlab.md").read_text()
    listed = page.split("**Inputs:** `render`", 1)[1].split(". The job", 1)[0]
    assert inputs and [i for i in inputs if f"`{i}`" not in "`render`" + listed] == []
    out = CliRunner().invoke(cli, ["ci-report", "--help"], terminal_width=200).output
    for text in ("more extra CPU than QTY", "no pod available", "more than N workloads restart"):
        assert text in out, text
