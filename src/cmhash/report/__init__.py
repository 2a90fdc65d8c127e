"""``cmhash report OLD NEW``: what a change to rendered manifests does to running pods.

``compare`` builds the report as plain data from two normal runs (no I/O); ``render``
formats it. It never puts a Secret's values or any hash of them in its output: Secrets
are described by key names only, and workload checksums are left out altogether.

The capacity budget (``--max-surge-cpu``, ``--max-surge-memory``, ``--no-downtime``)
reads ``summary.capacity`` (report/capacity.py): the extra requests if every restart
rolled at once, and the workloads with no pod available at some point.

The restart budget (``--max-restarts``, ``--max-restarts-per-namespace``) counts the
workloads whose pods the change replaces (the report's ``restart`` list: rolling,
partial and in-place restarts, and objects their engine re-creates; not CronJobs' next
run, refused changes, nor a scale from or to zero: no pod is replaced). Workloads only
NEW has (``added``: new pods) or only OLD has (``removed``) are not restarts and are not
counted; a workload defined twice counts once (workloads.py pairs them). A side without
any object (a List's items counted) is an ``empty-input`` warning (an error under
``--strict``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from cmhash.output import plural
from cmhash.report.compare import build
from cmhash.report.empty import NO_ITEMS, Empty, empty_message, holds_objects
from cmhash.report.render import FORMATS, fails, formatted
from cmhash.visible import visible

if TYPE_CHECKING:
    from cmhash.knowledge.quantity import Quantity
    from cmhash.settings.values import Settings

__all__ = ["Budget", "data_of", "formatted", "run", "verdict"]


class Budget(NamedTuple):
    total: int | None = None  # --max-restarts
    per_namespace: int | None = None  # --max-restarts-per-namespace
    surge_cpu: Quantity | None = None  # --max-surge-cpu
    surge_memory: Quantity | None = None  # --max-surge-memory
    no_downtime: bool = False  # --no-downtime

    def over(self, data: dict[str, Any]) -> str | None:
        """One line when the report exceeds the budget (each limit over it, "; "
        between them), else None."""
        lines = [x for x in (self._restarts(data), *self._capacity(data)) if x is not None]
        return "; ".join(lines) if lines else None

    def _capacity(self, data: dict[str, Any]) -> list[str | None]:
        from cmhash.knowledge.quantity import canonical, parse

        c = data["summary"]["capacity"]
        out: list[str | None] = []
        for limit, key, flag in (
            (self.surge_cpu, "cpu", "--max-surge-cpu"),
            (self.surge_memory, "memory", "--max-surge-memory"),
        ):
            got = parse(c["surgeRequests"][key])
            if limit is not None and got is not None and got.value > limit.value:
                out.append(
                    f"the restarts rolling at once request {canonical(got)} more {key} "
                    f"({flag} {canonical(limit)})"
                )
        # a downtime acknowledged (acknowledge:, cmhash.io/acknowledge) is a notice
        n = sum(
            1 for f in data["findings"] if f["code"] == "rollout-downtime" and f["level"] != "info"
        )
        if self.no_downtime and n:
            out.append(
                f"{plural(n, 'workload')} {'has' if n == 1 else 'have'} no pod available "
                f"during {'its' if n == 1 else 'their'} rollout (--no-downtime)"
            )
        return out

    def _restarts(self, data: dict[str, Any]) -> str | None:
        s = data["summary"]
        n = s["restart"]
        if self.total is not None and n > self.total:
            return f"{plural(n, 'workload')} {_verb(n)} (budget {self.total})"
        if self.per_namespace is None:
            return None
        over = {ns: k for ns, k in s["restartByNamespace"].items() if k > self.per_namespace}
        if not over:
            return None
        ns, k = max(over.items(), key=lambda item: (item[1], item[0]))
        more = f"; {len(over)} namespaces over" if len(over) > 1 else ""
        where = f"namespace {visible(ns)}" if ns else "no namespace"
        return f"{plural(k, 'workload')} {_verb(k)} in {where} (budget {self.per_namespace}{more})"


def _verb(n: int) -> str:
    return "restarts" if n == 1 else "restart"


NO_BUDGET = Budget()


def data_of(
    old: str,
    new: str,
    settings: Settings,
    values: bool = True,
    old_settings: Settings | None = None,
    nodes: int | None = None,
) -> dict[str, Any]:
    """Both sides (paths, or ``-`` for one) through the normal pipeline, and the report
    as plain data (``old_settings``: OLD's, when they differ: its own lock file;
    ``nodes``: --nodes, how many nodes run a DaemonSet's pods)."""
    from cmhash.app import pipeline as app
    from cmhash.errors import UsageError
    from cmhash.read.inputs import stream_sources
    from cmhash.report.scaling import Scalers
    from cmhash.runtime import lifetime

    if old == "-" and new == "-":
        raise UsageError("OLD and NEW cannot both be - (stdin)")
    inputs = [stream_sources([p], settings.exclude, settings.max_input_bytes) for p in (old, new)]
    # an empty side is a warning, and an error under --strict (the pipeline's own, as
    # for an empty pipe in the stream mode)
    own = (old_settings or settings, settings)
    sides = [
        app.run(sources, side, keep_plans=True, allow_empty=not side.strict, output=False)
        for sources, side in zip(inputs, own, strict=True)
    ]
    empty = []
    for label, path, srcs, side, mine in zip(
        ("OLD", "NEW"), (old, new), inputs, sides, own, strict=True
    ):
        where = srcs[0].display if len(srcs) == 1 else path
        if side.empty:
            empty.append(Empty(label, where))
        elif not holds_objects(srcs, settings.parser):  # a List without items
            if mine.strict:
                from cmhash.errors import InputError

                what = f"no Kubernetes objects in the input ({NO_ITEMS})"
                raise InputError(what, path=where, line=1, column=1)
            empty.append(Empty(label, where, NO_ITEMS))
    if empty and not settings.quiet:
        from cmhash.output import err

        for e in empty:
            err(f"{e.where}:1:1: warning: {empty_message(e)}")
    scalers = (
        Scalers(inputs[0], settings.parser, settings.namespace),
        Scalers(inputs[1], settings.parser, settings.namespace),
    )
    data = build(
        sides[0],
        sides[1],
        settings.annotation_key,
        settings.parser,
        values,
        scalers,
        empty,
        nodes,
        settings.acknowledge,
    )
    lifetime.keep(data)  # (not freed object by object at the end of the run)
    return data


def verdict(data: dict[str, Any], fail_on: str | None, budget: Budget) -> int:
    """The exit code: 1 with ``fail_on`` findings or more restarts than ``budget`` (one
    line on stderr), else 0."""
    from cmhash.errors import EXIT_CHANGED, EXIT_OK

    over = budget.over(data)
    if over is not None:
        from cmhash.output import err

        err(f"cmhash: {over}")
    return EXIT_CHANGED if fails(data, fail_on) or over is not None else EXIT_OK


def run(
    old: str,
    new: str,
    settings: Settings,
    fmt: str,
    template_file: str | None,
    fail_on: str | None,
    output: str | None,
    budget: Budget = NO_BUDGET,
    values: bool = True,
    old_settings: Settings | None = None,
    nodes: int | None = None,
) -> int:
    """The report command: the report written (stdout, or ``output`` atomically), and
    its ``verdict``."""
    from cmhash.errors import UsageError
    from cmhash.output import write_stdout

    if template_file is not None and callable(FORMATS[fmt]):
        raise UsageError(f"--template applies to --format markdown or text, not {fmt}")
    data = data_of(old, new, settings, values, old_settings, nodes)
    text = formatted(data, fmt, template_file)
    if output and output != "-":
        from cmhash.write.writer import write_new_file

        write_new_file(output, text)
    else:
        write_stdout(text)
    return verdict(data, fail_on, budget)
