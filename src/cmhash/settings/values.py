"""Settings: command-line options over the config file (``.cmhash.yaml``), validated once."""

from __future__ import annotations

import json
import os
import re
from typing import TYPE_CHECKING, Any, NamedTuple

from cmhash.analyze.sources import SecretSource, sources_from_config
from cmhash.errors import ConfigError, NodeError, UsageError
from cmhash.findings import Acknowledgement, acknowledgements
from cmhash.knowledge.kinds import Policy, WorkloadKind
from cmhash.plan.selection import Rule, SelectorError, rules_from

if TYPE_CHECKING:
    from collections.abc import Callable

    from cmhash.knowledge.sites import Site
    from cmhash.parse.tree import Node
    from cmhash.read.source import SourceText

CONFIG_NAME = ".cmhash.yaml"
DEFAULT_KEY = "checksum/config"
DEFAULT_MAX_INPUT = 256 * 1024 * 1024

_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")


def validate_annotation_key(key: str) -> str | None:
    """None if ``key`` is a valid annotation key (Kubernetes qualified name), else why not."""
    prefix, slash, name = key.rpartition("/")
    if slash and not prefix:
        return "the prefix before '/' is empty"
    if slash and (len(prefix) > 253 or not _DNS_SUBDOMAIN.match(prefix.lower())):
        return f"prefix {prefix!r} is not a DNS subdomain (lower-case, dots, dashes; <= 253)"
    if not name or len(name) > 63 or not _NAME.match(name):
        return (
            f"name {name!r} must be 1-63 characters of [A-Za-z0-9-_.], "
            "starting and ending with a letter or digit"
        )
    return None


class Settings(NamedTuple):
    annotation_key: str = DEFAULT_KEY
    namespace: str | None = None
    strict: bool = False
    jobs: bool = False
    jobs_rename: bool = False  # --jobs=rename: a Job runs again under a new name (jobs.py)
    pods: bool = False
    image_pull_secrets: bool = False
    exclude_secrets: bool = False
    secret_key: bytes | None = None  # never shown: see __repr__
    extra_kinds: tuple[WorkloadKind, ...] = ()
    extra_sources: tuple[SecretSource, ...] = ()  # secretSources of the config file
    quiet: bool = False
    parser: str = "fast"  # "fast" (libyaml, skips irrelevant documents) or "exact" (reference)
    max_input_bytes: int = DEFAULT_MAX_INPUT
    workers: int = 0  # 0: automatic (several processes only for big inputs)
    paths: tuple[str, ...] = ()  # manifest roots from the config file (relative to the cwd)
    exclude: tuple[str, ...] = ()  # gitignore-style patterns: config file, then --exclude
    scopes: tuple[str, ...] = ()  # environment directories: absolute glob patterns (scopes.py)
    config_file: str | None = None  # the .cmhash.yaml in use
    verbose: bool = False  # notes (skipped files, inferred namespace) on stderr
    notes: tuple[str, ...] = ()  # the configuration's notes, shown under --verbose
    progress: bool = False  # a progress bar on stderr (a terminal, not -q, not Helm/KRM)
    # the annotations of other tools that are read (analyze/declared.py)
    compat: frozenset[str] = frozenset(("reloader", "wave", "kapp"))
    opt_in: bool = False  # only workloads that opt in are annotated
    ignore_configs: tuple[Rule, ...] = ()  # plan/selection.py
    ignore_workloads: tuple[Rule, ...] = ()
    include_workloads: tuple[Rule, ...] = ()  # when any: only matching workloads
    versioned: bool = False  # rename every referenced ConfigMap/Secret (plan/versioning/)
    versioned_keep: bool = False  # mark versioned objects so Helm and Argo CD keep old ones
    versioned_immutable: bool = False  # set immutable: true on versioned objects
    keep_versions: int | None = None  # --keep-versions: a bounded history (plan/history.py)
    cpp_verify: bool = False  # the self-check in C++ (edit/cverify.py): big inputs
    acknowledge: tuple[Acknowledgement, ...] = ()  # known findings (findings.py)

    def merged(self, **overrides: Any) -> Settings:
        return self._replace(**{k: v for k, v in overrides.items() if v is not None})

    def __repr__(self) -> str:
        shown = ", ".join(
            f"{k}={'<hidden>' if k == 'secret_key' and v else repr(v)}"
            for k, v in zip(self._fields, self, strict=True)
        )
        return f"Settings({shown})"


def find_config(start: str | None = None) -> str | None:
    d = os.path.abspath(start or os.getcwd())
    while True:
        candidate = os.path.join(d, CONFIG_NAME)
        if os.path.isfile(candidate):
            return candidate
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def schema() -> dict[str, Any]:
    from importlib import resources  # 10 ms of imports: only when a config is used

    text = resources.files("cmhash").joinpath("schemas/config.schema.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def _at(root: Node | None, source: SourceText | None, path: list[str | int]) -> dict[str, int]:
    """line/column of the node at ``path`` in the config's tree (as far as it goes)."""
    from cmhash.parse.tree import get, items

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
    line, column = source.position(last.start)
    return {"line": line, "column": column}


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
        raise ConfigError(
            f"invalid configuration at {where}: {err.message}",
            path=origin,
            **_at(root, source, list(err.absolute_path)),
        )
    from cmhash.read.inputs import exclude_problem

    for i, pattern in enumerate(data.get("exclude") or ()):
        problem = exclude_problem(pattern)
        if problem:
            raise ConfigError(
                f"invalid configuration at exclude/{i}: {pattern!r} is {problem}",
                path=origin,
                **_at(root, source, ["exclude", i]),
            )
    for group, key in RULE_GROUPS:
        rules = (data.get(group) or {}).get(key) or []
        for i, rule in enumerate(rules):
            try:
                rules_from([rule], f"{group}.{key}")
            except SelectorError as exc:
                at = _at(root, source, [group, key, i, "selector"])
                if at and "\n" not in rule["selector"]:
                    at["column"] += exc.column  # inside a plain one-line selector
                raise ConfigError(
                    f"invalid configuration at {group}/{key}/{i}/selector: {exc.message}",
                    path=origin,
                    **at,
                ) from None

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
            raise ConfigError(
                f"invalid configuration at workloadKinds/{i}/kind: {problem}",
                path=origin,
                **_at(root, source, ["workloadKinds", i, "kind"]),
            )
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
    except NodeError as exc:
        err = src.error(exc.message, exc.offset)
        raise ConfigError(err.message, path=err.path, line=err.line, column=err.column) from None
    if data is None:
        data = {}
    validate(data, path, roots[0] if roots else None, src)
    assert isinstance(data, dict)
    return data


# settings the config file and the command line give as they are: config-file key ->
# Settings field (the command-line option's name is the field's)
PLAIN_KEYS = (
    ("annotationKey", "annotation_key"),
    ("namespace", "namespace"),
    ("strict", "strict"),
    ("pods", "pods"),
    ("imagePullSecrets", "image_pull_secrets"),
    ("excludeSecrets", "exclude_secrets"),
    ("optIn", "opt_in"),
    ("versioned", "versioned"),
    ("versionedKeep", "versioned_keep"),
    ("versionedImmutable", "versioned_immutable"),
)


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
    secret_key = None
    env = data.get("secretKeyEnv")
    if env:
        secret_key = secret_key_from_env(env)
    jobs = data.get("jobs")  # true, false or "rename"
    return base.merged(
        **{field: data.get(key) for key, field in PLAIN_KEYS},
        jobs=None if jobs is None else jobs is not False,
        jobs_rename=None if jobs is None else jobs == "rename",
        quiet=data.get("quiet"),
        secret_key=secret_key,
        extra_kinds=extra or None,
        extra_sources=sources_from_config(data["secretSources"])
        if data.get("secretSources")
        else None,
        paths=tuple(data["paths"]) if "paths" in data else None,
        exclude=tuple(data["exclude"]) if "exclude" in data else None,
        scopes=tuple(data["scopes"]) if "scopes" in data else None,
        compat=parse_compat(data["compat"]) if "compat" in data else None,
        ignore_configs=rules_from((data.get("ignore") or {}).get("configs"), "ignore.configs")
        or None,
        ignore_workloads=rules_from((data.get("ignore") or {}).get("workloads"), "ignore.workloads")
        or None,
        acknowledge=acknowledgements(data.get("acknowledge")) or None,
        include_workloads=rules_from(
            (data.get("include") or {}).get("workloads"), "include.workloads"
        )
        or None,
    )


COMPAT_NAMES = ("reloader", "wave", "kapp")


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
    if "group" in k:
        return str(k["group"])
    api = str(k.get("apiVersion", ""))
    return api.rpartition("/")[0] if "/" in api else ""


def secret_key_from_env(var: str) -> bytes:
    value = os.environ.get(var)
    if not value:
        raise UsageError(f"--secret-key-env: environment variable {var} is not set or empty")
    return value.encode("utf-8")


def _jobs_mode(settings: Settings) -> str:
    """The Job mode as the config file's ``jobs:`` spells it."""
    return "rename" if settings.jobs_rename else ("true" if settings.jobs else "false")


def layered(options: dict[str, Any], function_config: dict[str, Any] | None = None) -> Settings:
    """Defaults < config file < a KRM functionConfig < command-line ``options`` (the
    values of the options, by name, None where not given)."""
    settings = Settings()
    config_path = options.get("config_path")
    if config_path is None and not options.get("no_config"):
        config_path = find_config()
    if config_path:
        data = load_config_file(config_path)
        settings = settings_from_mapping(data, settings)
        settings = settings._replace(notes=overridden_profiles(data, config_path))
        config_dir = os.path.dirname(os.path.abspath(config_path))
        settings = settings._replace(
            config_file=config_path,
            paths=tuple(
                p if os.path.isabs(p) else os.path.relpath(os.path.join(config_dir, p))
                for p in settings.paths
            ),
            scopes=tuple(
                os.path.normpath(os.path.join(config_dir, p.rstrip("/") or "/"))
                for p in settings.scopes
            ),
        )
    if function_config:
        settings = settings_from_mapping(function_config, settings)
        notes = overridden_profiles(function_config, "functionConfig")
        settings = settings._replace(notes=settings.notes + notes)
    key = options.get("annotation_key")
    if key is not None:
        problem = validate_annotation_key(key)
        if problem:
            raise UsageError(f"--annotation-key {key!r}: {problem}")
    from cmhash.read.inputs import exclude_problem

    for pattern in options.get("exclude") or ():
        problem = exclude_problem(pattern)
        if problem:
            raise UsageError(f"--exclude {pattern!r}: {problem}")
    secret_env = options.get("secret_key_env")
    jobs, rename = options.get("jobs"), options.get("rename_jobs")
    # the command line's Job mode over the config file's ``jobs:`` (options.py refuses
    # two contradictory options): --jobs=annotate turns a configured rename off, a plain
    # --jobs keeps the configured mode
    if options.get("annotate_jobs"):
        jobs, rename = True, False
    configured = _jobs_mode(settings)
    settings = settings.merged(
        **{field: options.get(field) for _, field in PLAIN_KEYS},
        jobs=True if rename else jobs,
        jobs_rename=True if rename else (False if jobs is False or rename is False else None),
        secret_key=secret_key_from_env(secret_env) if secret_env else None,
        parser=options.get("parser"),
        max_input_bytes=options.get("max_input_bytes"),
        workers=options.get("workers"),
        compat=parse_compat(options["compat"]) if options.get("compat") else None,
        exclude=settings.exclude + tuple(options.get("exclude") or ()) or None,
        verbose=options.get("verbose") or None,
        quiet=options.get("quiet"),
    )
    if settings.config_file and _jobs_mode(settings) != configured:
        settings = settings._replace(
            notes=(
                *settings.notes,
                f"{settings.config_file}: jobs: {configured} is overridden by the command "
                f"line (Jobs: {_jobs_mode(settings)})",
            )
        )
    from cmhash.runtime.progress import wanted

    return settings._replace(progress=function_config is None and wanted(quiet=settings.quiet))
