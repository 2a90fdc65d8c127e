"""report: the restart budget (``--max-restarts``, ``--max-restarts-per-namespace``).

Counts the workloads whose pods the change replaces (the report's ``restart`` list:
rolling, partial and in-place restarts; not CronJobs' next run, nor refused changes).
Workloads only NEW has (``added``: new pods) or only OLD has (``removed``) are not
restarts and are not counted; a workload defined twice counts once (pairing.py)."""

from __future__ import annotations

from typing import Any, NamedTuple

from cmhash.visible import visible


class Budget(NamedTuple):
    total: int | None = None  # --max-restarts
    per_namespace: int | None = None  # --max-restarts-per-namespace

    def over(self, data: dict[str, Any]) -> str | None:
        """One line when the report's restarts exceed the budget, else None."""
        s = data["summary"]
        n = s["restart"]
        if self.total is not None and n > self.total:
            return f"{_workloads(n)} {_verb(n)} (budget {self.total})"
        if self.per_namespace is None:
            return None
        over = {ns: k for ns, k in s["restartByNamespace"].items() if k > self.per_namespace}
        if not over:
            return None
        ns, k = max(over.items(), key=lambda item: (item[1], item[0]))
        more = f"; {len(over)} namespaces over" if len(over) > 1 else ""
        where = f"namespace {visible(ns)}" if ns else "no namespace"
        return f"{_workloads(k)} {_verb(k)} in {where} (budget {self.per_namespace}{more})"


def _verb(n: int) -> str:
    return "restarts" if n == 1 else "restart"


def _workloads(n: int) -> str:
    return f"{n} workload{'' if n == 1 else 's'}"


NO_BUDGET = Budget()
