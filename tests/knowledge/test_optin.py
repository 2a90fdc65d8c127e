"""knowledge/kinds.py OPT_IN: each row names a plan option and a skip reason by name (the
knowledge package sits below the stages that define them); both must exist."""

from __future__ import annotations

import pytest

from cmhash.analyze.summaries import SkipReason
from cmhash.knowledge.kinds import OPT_IN, OptIn
from cmhash.plan.options import PlanOptions


@pytest.mark.parametrize("row", OPT_IN.values(), ids=[p.value for p in OPT_IN])
def test_a_row_names_a_boolean_plan_option_and_a_skip_reason(row: OptIn) -> None:
    assert type(getattr(PlanOptions(), row.option)) is bool
    assert SkipReason[row.skip].name == row.skip
