"""The config file (``.cmhash.yaml``, a KRM functionConfig): found, read, validated with
its JSON schema (and what a schema cannot say), and turned into Settings."""

from __future__ import annotations

import json
import os
import re
from typing import TYPE_CHECKING, Any

from cmhash.errors import ConfigError, NodeError, UsageError
from cmhash.findings import acknowledgements
from cmhash.knowledge.compat import COMPAT_NAMES
from cmhash.knowledge.kinds import Policy, WorkloadKind, group_of
from cmhash.knowledge.sources import sources_from_config
from cmhash.plan.selection import SelectorError, rules_from
from cmhash.settings.values import DEFAULT_MAX_INPUT, PLAIN_KEYS, Settings

if TYPE_CHECKING:
    from collections.abc import Callable

    from cmhash.knowledge.podspec import Site
    from cmhash.parse.tree import Node
    from cmhash.read.source import SourceText


def schema() -> dict[str, Any]:
    from importlib import resources  # 10 ms of imports: only when a config is used

    text = resources.files("cmhash").joinpath("schemas/config.schema.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def _at(
    root: Node | None, source: SourceText | None, path: list[str | int], key: str | None = None
) -> dict[str, int]:
    """line/column of the node at ``path`` in the config's tree (as far as it goes), or of
    its ``key`` when it is a mapping that has one."""
    from cmhash.parse.tree import MAP, entries, get, items

    if root is None or source is None:
        return {}
    node: Node | None = root
    last = root
    for step in path:
        node = (
            items(node)[step]
            if isinstance(step, int) and step < len(items(node))
            else (get(node, step) if isinstance(step, str) else None)
        )
        if node is None:
            break
        last = node
    if node is not None and key is not None and last.kind == MAP and key in entries(last):
        last = entries(last)[key][0]  # (the whole path found: point at its refused key)
    line, column = source.position(last.start)
    return {"line": line, "column": column}


def _invalid(where: str, problem: str, origin: str, at: dict[str, int]) -> ConfigError:
    """The error for the config's node at ``where`` (``at``: its line and column)."""
    return ConfigError(f"invalid configuration at {where}: {problem}", path=origin, **at)


def _message(err: Any) -> str:
    """jsonschema's message, but a mistyped word of a long list names the closest entry
    instead of the whole list."""
    if err.validator == "enum" and isinstance(err.instance, str) and len(err.validator_value) > 5:
        import difflib

        choices = [str(v) for v in err.validator_value]
        close = difflib.get_close_matches(err.instance, choices, n=1)
        hint = (
            f"did you mean {close[0]!r}?" if close else f"none of the {len(choices)} known is close"
        )
        return f"{err.instance!r} is not a known name ({hint})"
    return str(err.message)


def _unexpected(err: Any) -> str | None:
    """The first key (in the file's order) an ``additionalProperties: false`` refused: the
    error then points at that key, not at its mapping."""
    if err.validator != "additionalProperties" or not isinstance(err.instance, dict):
        return None
    known = err.schema.get("properties", {})
    patterns = err.schema.get("patternProperties", {})
    return next(
        (k for k in err.instance if k not in known and not any(re.search(p, k) for p in patterns)),
        None,
    )


def validate(
    data: Any, origin: str, root: Node | None = None, source: SourceText | None = None
) -> None:
    """Validate with jsonschema (imported only when a config is used), then what a schema
    cannot say (label selectors); errors point at the offending node when the config's
    tree is given."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema())
    errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    if errors:
        err = errors[0]
        where = "/".join(str(p) for p in err.absolute_path) or "(top level)"
        at = _at(root, source, list(err.absolute_path), _unexpected(err))
        raise _invalid(where, _message(err), origin, at)
    from cmhash.read.inputs import exclude_problem

    for i, pattern in enumerate(data.get("exclude") or ()):
        problem = exclude_problem(pattern)
        if problem:
            at = _at(root, source, ["exclude", i])
            raise _invalid(f"exclude/{i}", f"{pattern!r} is {problem}", origin, at)
    for group, key in RULE_GROUPS:
        rules = (data.get(group) or {}).get(key) or []
        for i, rule in enumerate(rules):
            try:
                rules_from([rule], f"{group}.{key}")
            except SelectorError as exc:
                at = _at(root, source, [group, key, i, "selector"])
                if at and "\n" not in rule["selector"]:
                    at["column"] += exc.column  # inside a plain one-line selector
                raise _invalid(f"{group}/{key}/{i}/selector", exc.message, origin, at) from None

    _check_profiles(data, origin, root, source)


RULE_GROUPS = (("ignore", "configs"), ("ignore", "workloads"), ("include", "workloads"))


def _check_profiles(
    data: dict[str, Any], origin: str, root: Node | None, source: SourceText | None
) -> None:
    """A ``workloadKinds`` row for a kind cmhash reads itself (a Deployment, a Job, an
    Argo Rollout: their rows carry rules a profile cannot say) or a second row for one
    kind: an error at the row's ``kind``. An operator's kind may be replaced (a note
    under -v: ``overridden_profiles``)."""
    from cmhash.knowledge.kinds import BUILTIN_KINDS

    core = {(k.group, k.kind) for k in BUILTIN_KINDS}
    # (group, kind) -> (row index, component) of each row so far
    seen: dict[tuple[str, str], list[tuple[int, str | None]]] = {}
    for i, row in enumerate(data.get("workloadKinds") or ()):
        key = (_group(row), row["kind"])
        shown = f"{key[0]}/{key[1]}" if key[0] else key[1]
        component = row.get("component")
        rows = seen.setdefault(key, [])
        problem = None
        if key in core:
            problem = (
                f"{shown} is a built-in kind, read with rules a profile cannot replace: "
                "remove this row"
            )
        elif rows and (component is None or any(c in (None, component) for _, c in rows)):
            problem = (
                f"{shown} is already profiled by workloadKinds/{rows[0][0]}: keep one row, "
                "or one row per pod group, each with its own component"
            )
        if problem is not None:
            at = _at(root, source, ["workloadKinds", i, "kind"])
            raise _invalid(f"workloadKinds/{i}/kind", problem, origin, at)
        rows.append((i, component))


def overridden_profiles(data: dict[str, Any], origin: str) -> tuple[str, ...]:
    """Notes (shown under -v) for ``workloadKinds`` rows that replace a built-in
    operator profile (knowledge/operators.py): the user's row is the one read."""
    from cmhash.knowledge.kinds import OPERATOR_KINDS

    builtin = {(k.group, k.kind): k for k in OPERATOR_KINDS}
    out = []
    for i, row in enumerate(data.get("workloadKinds") or ()):
        known = builtin.get((_group(row), row["kind"]))
        if known is not None:
            out.append(
                f"{origin}: workloadKinds/{i} replaces the built-in profile of "
                f"{known.group}/{known.kind} ({known.operator})"
            )
    return tuple(out)


def load_config_file(path: str) -> dict[str, Any]:
    from cmhash.parse.events import backend, parse_chunk
    from cmhash.parse.tree import to_python
    from cmhash.read.source import decode

    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise ConfigError(f"cannot read config file: {exc.strerror}", path=path) from None
    src = decode(path, raw, max_bytes=DEFAULT_MAX_INPUT)
    try:
        roots = parse_chunk(src.text, 0, backend("fast"))
        data = to_python(roots[0]) if roots else {}
        later = [r for r in roots[1:] if to_python(r) is not None]
    except NodeError as exc:
        err = src.error(exc.message, exc.offset)
        raise ConfigError(err.message, path=err.path, line=err.line, column=err.column) from None
    if later:  # (what a later document set would be silently lost)
        line, column = src.position(later[0].start)
        raise ConfigError(
            "a config file is one YAML document: join this one to the first or remove it",
            path=path,
            line=line,
            column=column,
        )
    if data is None:
        data = {}
    validate(data, path, roots[0] if roots else None, src)
    assert isinstance(data, dict)
    return data


def workload_kind(row: dict[str, Any]) -> WorkloadKind:
    """A ``workloadKinds`` row (schema-checked) -> its WorkloadKind: a pod template at
    ``templatePath``, or an operator's resource (``annotationPath``, ``references``)."""
    from cmhash.knowledge.operators import key_ref, named, names

    def dotted(text: str) -> tuple[str, ...]:
        return tuple(p for p in text.split(".") if p)

    forms: dict[str, Callable[..., Site]] = {"names": names, "name": named, "ref": key_ref}
    sites = tuple(
        forms[r["form"]](*dotted(r["path"]), target=r["kind"]) for r in row.get("references", ())
    )
    spec_path = dotted(row["podSpecPath"]) if "podSpecPath" in row else None
    if "annotationPath" in row:
        path = dotted(row["annotationPath"])
        return WorkloadKind(
            _group(row),
            row["kind"],
            path[:1],
            level=path[1:],
            spec_path=spec_path if spec_path is not None else path[:1],
            sites=sites,
            operator=row.get("operator", "its operator"),
            component=row.get("component"),
        )
    return WorkloadKind(
        _group(row),
        row["kind"],
        dotted(row.get("templatePath", "spec.template")),
        Policy.ANNOTATE,
        spec_path=spec_path,
        sites=sites,
        operator=row.get("operator"),
        component=row.get("component"),
    )


def settings_from_mapping(data: dict[str, Any], base: Settings | None = None) -> Settings:
    """Config-file keys (camelCase, validated by the schema) -> Settings."""
    extra = tuple(workload_kind(k) for k in data.get("workloadKinds", ()))
    base = Settings() if base is None else base
    env = data.get("secretKeyEnv")
    jobs = data.get("jobs")  # true, false or "rename"
    return base.merged(
        **{field: data.get(key) for key, field in PLAIN_KEYS},
        jobs=None if jobs is None else jobs is not False,
        jobs_rename=None if jobs is None else jobs == "rename",
        quiet=data.get("quiet"),
        secret_key=secret_key_from_env(env) if env else None,
        extra_kinds=extra or None,
        extra_sources=sources_from_config(data["secretSources"])
        if data.get("secretSources")
        else None,
        **{key: tuple(data[key]) for key in ("paths", "exclude", "scopes") if key in data},
        lock_file=data.get("lock"),
        compat=parse_compat(data["compat"]) if "compat" in data else None,
        # ignore_configs, ignore_workloads, include_workloads
        **{
            f"{group}_{key}": rules_from((data.get(group) or {}).get(key), f"{group}.{key}") or None
            for group, key in RULE_GROUPS
        },
        acknowledge=acknowledgements(data.get("acknowledge")) or None,
    )


def parse_compat(value: str | list[str]) -> frozenset[str]:
    """``all``, ``none``, or names (a list, or a comma-separated string)."""
    names = [v.strip() for v in (value.split(",") if isinstance(value, str) else value)]
    if names == ["all"]:
        return frozenset(COMPAT_NAMES)
    if names in (["none"], [""], []):
        return frozenset()
    unknown = [n for n in names if n not in COMPAT_NAMES]
    if unknown:
        raise UsageError(
            f"compat: unknown {', '.join(unknown)} (use all, none, or any of "
            f"{', '.join(COMPAT_NAMES)})"
        )
    return frozenset(names)


def _group(k: dict[str, Any]) -> str:
    return str(k["group"]) if "group" in k else group_of(str(k.get("apiVersion", "")))


def secret_key_from_env(var: str) -> bytes:
    value = os.environ.get(var)
    if not value:
        raise UsageError(f"--secret-key-env: environment variable {var} is not set or empty")
    return value.encode("utf-8")
