"""``cmhash report``, the formats: JSON, GitLab Code Quality, and Markdown/text through
jinja2 templates (the shipped ones or a user's)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cmhash import jsonout
from cmhash.errors import UsageError
from cmhash.mermaid import report_graph
from cmhash.model import Level
from cmhash.output import plural
from cmhash.visible import visible, visible_data


def to_json(data: dict[str, Any]) -> str:
    return jsonout.dumps(data) + "\n"


CODEQUALITY_SEVERITY = {Level.ERROR: "critical", Level.WARNING: "major", Level.INFO: "info"}


def to_codequality(data: dict[str, Any]) -> str:
    """GitLab Code Quality: one issue per finding (the MR widget shows new ones)."""
    issues = [
        {
            "description": visible(f"{f['message']} [{f['code']}]"),
            "check_name": f"cmhash/{f['code']}",
            "fingerprint": f["fingerprint"],
            "severity": CODEQUALITY_SEVERITY[f["level"]],
            "location": {
                "path": visible(f["file"].removeprefix("./")),
                "lines": {"begin": f["line"]},
            },
        }
        for f in data["findings"]
    ]
    return jsonout.dumps(issues) + "\n"


def fails(data: dict[str, Any], fail_on: str | None) -> bool:
    if fail_on is None:
        return False
    s = data["summary"]
    return bool(s["errors"] or (fail_on == Level.WARNING and s["warnings"]))


def _md(value: Any) -> str:
    """Safe in a Markdown table cell: pipes, newlines, and markup characters escaped."""
    text = str(value)
    for ch in "\\`*_[]<>|":
        text = text.replace(ch, "\\" + ch)
    return text.replace("\r", " ").replace("\n", " ")


def _code(value: Any) -> str:
    """An inline code span in a table cell (key and object names)."""
    text = str(value).replace("|", "\\|").replace("\n", " ")
    fence = "``" if "`" in text else "`"
    return f"{fence}{text}{fence}" if fence == "`" else f"{fence} {text} {fence}"


def environment(template_dir: str | None = None) -> Any:
    import jinja2

    loaders: list[Any] = [jinja2.PackageLoader("cmhash", "templates")]
    if template_dir is not None:
        loaders.insert(0, jinja2.FileSystemLoader(template_dir))
    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader(loaders),
        autoescape=False,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["md"] = _md
    env.filters["code"] = _code
    env.filters["plural"] = plural
    env.filters["fence"] = _fence
    env.filters["capacity"] = capacity_text
    env.filters["capacity_total"] = capacity_total
    return env


def _requests(r: dict[str, Any], sign: str = "") -> str:
    return f"{sign}{r['cpu']} CPU, {sign}{r['memory']} memory"


def capacity_text(w: dict[str, Any]) -> str:
    """A restart's ``capacity`` in one line: ``replicas 10: +3 pods (+300m CPU, +384Mi
    memory), -2 at once, at least 8 available, 2 waves, at least 50 s; per pod 100m CPU,
    128Mi memory``; DOWNTIME first when every pod is down at some point."""
    c = w.get("capacity")
    if not c:
        return ""
    r = c["replicas"]
    count = "unknown" if r is None else r if isinstance(r, int) else f"{r['min']}..{r['max']}"
    if w.get("kind") == "DaemonSet":
        count = "nodes " + ("unknown (--nodes N)" if r is None else str(count))
    else:
        count = f"replicas {count}"
    parts = []
    if c["surgePods"] is not None:
        extra = ""
        r = c["surgeRequests"]
        if c["surgePods"] and None not in r.values() and set(r.values()) != {"0"}:
            extra = f" ({_requests(r, '+')})"
        parts.append(f"+{plural(c['surgePods'], 'pod')}{extra}")
    else:
        parts.append("surge unknown")
    if c["unavailablePods"] is not None:
        parts.append(f"{c['unavailablePods']} down at once")
    if c["minAvailable"] is not None:
        parts.append(f"at least {c['minAvailable']} available")
    if c["waves"] is not None:
        parts.append(plural(c["waves"], "wave"))
    if c["durationAtLeastSeconds"] is not None:
        parts.append(f"at least {c['durationAtLeastSeconds']} s")
    line = f"{count}: " + ", ".join(parts)
    if set(c["requests"].values()) == {"0"}:
        line += "; no requests"
    elif None not in c["requests"].values():
        line += f"; per pod {_requests(c['requests'])}"
    else:
        line += "; requests unknown"
    return ("DOWNTIME: " if c["downtime"] else "") + line


def capacity_total(t: dict[str, Any]) -> str:
    """``summary.capacity`` (or one namespace's) in one line."""
    line = f"+{plural(t['surgePods'], 'pod')} ({_requests(t['surgeRequests'], '+')})"
    if t["downtime"]:
        line += f"; {plural(t['downtime'], 'workload')} with downtime"
    if t.get("unknown"):
        line += f"; {plural(t['unknown'], 'workload')} unknown"
    return line


def _fence(text: str) -> str:
    """A code fence longer than any run of backticks in ``text`` (at least three)."""
    import re

    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _template_line(exc: BaseException, template_file: str) -> int | None:
    """The line of the user's template an exception was raised at (jinja2 rewrites its
    traceback to point into the template), if it was."""
    import os

    path = os.path.abspath(template_file)
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if os.path.abspath(tb.tb_frame.f_code.co_filename) == path:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def render_template(data: dict[str, Any], name: str, template_file: str | None) -> str:
    """Rendered with a shipped template (``report.md.j2``, ``report.txt.j2``) or a user's,
    a template error as one line (``file:line``), exit 2: jinja2's own, and, for a
    user's template, whatever it raises (a division by zero, a file that is not UTF-8):
    the template is input, not cmhash's code."""
    import os

    import jinja2

    try:
        if template_file is not None:
            env = environment(os.path.dirname(os.path.abspath(template_file)))
            tpl = env.get_template(os.path.basename(template_file))
        else:
            tpl = environment().get_template(name)
        return str(tpl.render(report=data, mermaid=report_graph(data)))
    except jinja2.TemplateError as exc:
        where = template_file or name
        line = getattr(exc, "lineno", None)
        if line is None and template_file is not None:
            line = _template_line(exc, template_file)
        what = exc.message or type(exc).__name__
        if isinstance(exc, jinja2.TemplateNotFound):
            what = f"no template {what} (next to the template, or shipped with cmhash)"
        raise UsageError(f"{where}{f':{line}' if line else ''}: template error: {what}") from None
    except UnicodeDecodeError as exc:
        if template_file is None:
            raise
        raise UsageError(
            f"{template_file}: template error: not UTF-8 (byte {exc.start}; a template or "
            "a file it includes)"
        ) from None
    except Exception as exc:
        if template_file is None:
            raise  # a shipped template: cmhash's own bug (exit 3)
        line = _template_line(exc, template_file)
        raise UsageError(
            f"{template_file}{f':{line}' if line else ''}: template error: "
            f"{type(exc).__name__}: {visible(str(exc))}"
        ) from None


# --format -> a shipped template (markdown, text: --template may replace it) or a function
FORMATS: dict[str, str | Callable[[dict[str, Any]], str]] = {
    "markdown": "report.md.j2",
    "text": "report.txt.j2",
    "json": to_json,
    "codequality": to_codequality,
}


def formatted(data: dict[str, Any], fmt: str, template_file: str | None) -> str:
    """The report in ``fmt``; ``template_file`` replaces the shipped template."""
    form = FORMATS[fmt]
    if callable(form):  # (run refuses --template with it, before the pipeline runs)
        return form(data)
    # text for people (a terminal, a review comment): no control or bidi character raw
    return render_template(visible_data(data), form, template_file)
