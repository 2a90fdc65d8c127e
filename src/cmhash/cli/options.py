"""What more than one command takes: the options that make Settings (inject, explain,
report, patches, ci-report), report's verdict options, the FILE and token of the
commands that post a comment, and the exit codes of the group and inject."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

_F = TypeVar("_F", bound=Callable[..., Any])
EXIT_CODES_HELP = """\b
Exit codes:
  0  success (nothing to change, or changes written)
  1  changes needed (--check, --diff --check)
  2  bad input or usage: YAML syntax, unreadable file, invalid config,
     unsafe edit, --strict finding
  3  internal error (a bug: please report it)"""


def common_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """PATH... and the options that make Settings (inject, explain)."""
    return click.argument("paths", nargs=-1, type=click.Path(allow_dash=True))(settings_options(fn))


SETTINGS_OPTIONS = [
    click.option(
        "--annotation-key",
        "--key",
        "annotation_key",
        metavar="KEY",
        help="Pod-template annotation to write [default: checksum/config].",
    ),
    click.option(
        "-n",
        "--namespace",
        metavar="NS",
        help="Namespace that objects without one land in (like kubectl apply -n).",
    ),
    click.option(
        "--strict/--no-strict",
        default=None,
        help="A missing non-optional reference is an error (exit 2).",
    ),
    click.option(
        "--jobs/--no-jobs",
        default=None,
        help="Annotate Job pod templates (immutable: apply fails on change).",
    ),
    click.option(
        "--rename-jobs",
        "rename_jobs",
        is_flag=True,
        default=None,
        help="(also --jobs=rename) Give a Job that uses in-stream config a new name when its "
        "template or config changes, so that it runs again (same inputs, same name).",
    ),
    click.option(
        "--annotate-jobs",
        "annotate_jobs",
        is_flag=True,
        default=None,
        help="(also --jobs=annotate) Annotate Job pod templates, even where the config "
        "file says jobs: rename.",
    ),
    click.option(
        "--pods/--no-pods",
        default=None,
        help="Annotate bare Pods (their own metadata.annotations).",
    ),
    click.option(
        "--image-pull-secrets/--no-image-pull-secrets",
        default=None,
        help="Count imagePullSecrets as references.",
    ),
    click.option(
        "--exclude-secrets/--include-secrets",
        default=None,
        help="Leave Secrets out of every checksum.",
    ),
    click.option(
        "--hash-live-reloaded/--no-hash-live-reloaded",
        default=None,
        help="Also hash what an operator's own config reloader applies without a restart "
        "(an Alertmanager's configuration), so that a change to it rolls the pods.",
    ),
    click.option(
        "--secret-key-env",
        metavar="VAR",
        help="Hash Secret content with HMAC-SHA256 keyed by this env variable.",
    ),
    click.option(
        "--lock",
        metavar="FILE",
        type=click.Path(dir_okay=False, allow_dash=False),
        help="A lock file written by `cmhash lock`: each fingerprint of what the cluster "
        "holds enters the checksums of the workloads that use that object.",
    ),
    click.option(
        "--config",
        "config_path",
        type=click.Path(dir_okay=False),
        help="Config file [default: .cmhash.yaml in this or a parent directory].",
    ),
    click.option("--no-config", is_flag=True, help="Ignore .cmhash.yaml files."),
    click.option(
        "--parser",
        type=click.Choice(["fast", "exact"]),
        default=None,
        help="fast: libyaml (default); exact: the pure-Python reference "
        "parser. Both read the same documents, with the same result.",
    ),
    click.option(
        "--max-input-bytes",
        type=click.IntRange(min=1),
        default=None,
        help="Refuse inputs larger than this [default: 268435456].",
    ),
    click.option(
        "--workers",
        type=click.IntRange(min=0),
        default=None,
        help="Processes for big inputs [default: 0 = automatic].",
    ),
    click.option(
        "--compat",
        metavar="all|none|LIST",
        help="Read these tools' annotations too: all (default), none, or a comma list of "
        "reloader, wave, kapp.",
    ),
    click.option(
        "--opt-in/--no-opt-in",
        "opt_in",
        default=None,
        help='Annotate only workloads that opt in (cmhash.io/enabled: "true", or Reloader '
        "auto/search or Wave update-on-config-change).",
    ),
    click.option(
        "--versioned/--no-versioned",
        default=None,
        help="Rename every referenced ConfigMap/Secret to NAME-<content suffix> and rewrite "
        "its references, so a rollback finds the old config.",
    ),
    click.option(
        "--versioned-keep/--no-versioned-keep",
        default=None,
        help="Mark versioned objects helm.sh/resource-policy: keep and Argo CD Prune=false, "
        "so earlier versions stay for rollbacks.",
    ),
    click.option(
        "--versioned-immutable/--no-versioned-immutable",
        default=None,
        help="Set immutable: true on versioned objects.",
    ),
    click.option(
        "--exclude",
        multiple=True,
        metavar="PATTERN",
        help="Leave matching files and directories out of directory walks "
        "(gitignore syntax, relative to the walked directory; repeatable).",
    ),
    click.option(
        "-q",
        "--quiet",
        is_flag=True,
        default=None,
        help="Print errors only (no warnings or notices).",
    ),
    click.option(
        "-v",
        "--verbose",
        is_flag=True,
        help="Notes (skipped files, inputs, inferred namespace) and tracebacks "
        "for internal errors.",
    ),
]


def settings_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The options that make Settings (settings.layered reads them by name)."""
    for opt in reversed(SETTINGS_OPTIONS):
        fn = opt(fn)
    return fn


# The options report and ci-report decide their exit code and the values shown by
# (report.Budget, fail_on, --no-values): name (--name) -> (settings, report's help).
_VERDICT: dict[str, tuple[dict[str, Any], str]] = {
    "fail_on": (
        {"type": click.Choice(["error", "warning"]), "default": None},
        "Exit 1 when the new side has findings of this level or worse.",
    ),
    "max_restarts": (
        {"type": click.IntRange(min=0), "default": None, "metavar": "N"},
        "Exit 1 when more than N workloads restart (the report is still written).",
    ),
    "max_restarts_per_namespace": (
        {"type": click.IntRange(min=0), "default": None, "metavar": "N"},
        "Exit 1 when more than N workloads restart in any one namespace.",
    ),
    "max_surge_cpu": (
        {"default": None, "metavar": "QTY", "callback": lambda c, p, v: _quantity(p, v)},
        "Exit 1 when the restarts rolling at once request more extra CPU than QTY (a "
        "Kubernetes quantity: 4, 2500m).",
    ),
    "max_surge_memory": (
        {"default": None, "metavar": "QTY", "callback": lambda c, p, v: _quantity(p, v)},
        "Exit 1 when the restarts rolling at once request more extra memory than QTY (8Gi, 512Mi).",
    ),
    "no_downtime": (
        {"is_flag": True},
        "Exit 1 when a restarting workload has no pod available at some point of its rollout.",
    ),
    "nodes": (
        {"type": click.IntRange(min=0), "default": None, "metavar": "N"},
        "The nodes that run each DaemonSet's pods (unknown offline): gives a DaemonSet's "
        "capacity figures.",
    ),
    "no_values": (
        {"is_flag": True},
        "Show no ConfigMap values (key names only, as for Secrets).",
    ),
}


def _quantity(param: Any, value: str | None) -> Any:
    """A --max-surge-* value: a quantity as Kubernetes reads it, else a usage error."""
    if value is None:
        return None
    from cmhash.knowledge.quantity import parse

    q = parse(value)
    if q is None or q.value < 0:
        raise click.BadParameter(
            f"{value!r} is not a Kubernetes quantity (e.g. 4, 2500m, 8Gi)", param=param
        )
    return q


# the budgets of report and ci-report, in the order their help shows them
BUDGETS = (
    "max_restarts",
    "max_restarts_per_namespace",
    "max_surge_cpu",
    "max_surge_memory",
    "no_downtime",
    "nodes",
    "no_values",
)


def pop_budget(opts: dict[str, Any]) -> tuple[Any, bool, int | None]:
    """``BUDGETS`` taken out of a command's options: the ``report.Budget``, whether
    ConfigMap values are shown (not --no-values), and --nodes."""
    from cmhash.report import Budget

    budget = Budget(*(opts.pop(name) for name in BUDGETS[:5]))
    return budget, not opts.pop("no_values"), opts.pop("nodes")


def verdict_options(*names: str, described: bool = True) -> Callable[[_F], _F]:
    """These of report's verdict options, in this order (``described``: with their help
    text, as report and ci-report show them)."""

    def apply(fn: _F) -> _F:
        for name in reversed(names):
            settings, text = _VERDICT[name]
            decl = "--" + name.replace("_", "-")
            fn = click.option(decl, **({**settings, "help": text} if described else settings))(fn)
        return fn

    return apply


def comment_options(token_env: str, token_help: str) -> Callable[[_F], _F]:
    """FILE, --token-env and --comment-key, of the commands that post a report as a
    merge-request comment (gitlab-note, github-comment)."""

    def apply(fn: _F) -> _F:
        fn = click.option(
            "--comment-key",
            default=None,
            metavar="TEXT",
            help="Which comment is this job's, shown above the report (default: FILE's "
            "path in the repository, however it is named: two jobs of one merge request "
            "keep one each).",
        )(fn)
        fn = click.option(
            "--token-env", default=token_env, show_default=True, metavar="VAR", help=token_help
        )(fn)
        return click.argument("file", type=click.Path(dir_okay=False))(fn)

    return apply
