"""Every finding code is produced by a golden case (checked exactly there), and the
codes are documented in the README."""

from __future__ import annotations

import re

from conftest import ROOT

from cmhash.findings import CODES, LEVEL_ORDER

GOLDENS = [*(ROOT / "tests" / "cases").glob("*/stderr.txt"),
           ROOT / "tests" / "fixtures" / "report" / "expected.txt"]


def test_every_code_has_a_golden() -> None:
    seen = set()
    for path in GOLDENS:
        seen |= set(re.findall(r"\[([a-z-]+)\](?: \(new\))?$", path.read_text(), re.MULTILINE))
    assert set(CODES) <= seen, sorted(set(CODES) - seen)


def test_codes_are_documented() -> None:
    readme = (ROOT / "README.md").read_text()
    for code, (level, _) in CODES.items():
        assert level in LEVEL_ORDER
        assert f"| `{code}` | {level} |" in readme, code
