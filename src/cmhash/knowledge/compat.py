"""Reloader's and Wave's decisions, as they make them, as data.

**Reloader** (stakater/Reloader ``pkg/common/common.go`` ``ShouldReload``, constants in
``internal/pkg/options/flags.go``) decides per changed object of one kind (ConfigMap,
Secret, SecretProviderClass) and per workload, by the first of ``RELOADER_RULES`` that
applies (ignore, exclude list, reload list, search and match, auto, auto-reload-all;
each row says where ShouldReload decides it), else no. The exclude lists are read from
the workload's own metadata only (trimmed, exact names); the reload list's items are
Go regular expressions (analyze/patterns.py). The reload list, ``auto``, the typed
``auto`` and ``search`` are read from the workload's ``metadata.annotations`` when any
of the four is there, else all from its pod template's (per kind: ``found || foundAuto
|| foundTypedAuto || foundSearchAnn``).

cmhash's default mode (every workload) is Reloader's ``--auto-reload-all``; ``--opt-in``
is Reloader's default. A pod-spec reference counts when Reloader would reload on its
object; a reload-list pattern is a declared dependency (it counts even where the pod
spec does not use the object, as Reloader reloads then too).

**Wave** (wave-k8s/wave ``pkg/core``) reads only the workload's own
``metadata.annotations``: ``wave.pusher.com/update-on-config-change`` exactly ``"true"``
(``required_annotation.go``) makes it hash every pod-spec reference; the
``extra-configmaps``/``extra-secrets`` items (``children.go`` ``getChildNamesByType``)
are split on ``,`` (not trimmed) and on ``/``: one part is a name in the workload's
namespace, two are ``namespace/name``, anything else is skipped without a word.

**Declarations** (``DECLARATIONS``): annotations that declare a workload's dependencies
the pod spec does not show, and those by which a ConfigMap or Secret leaves every
checksum: cmhash's own and other tools' (Reloader, Wave, kapp), each gated by its tool's
name in ``compat:`` (None: cmhash's own, always read). analyze/declared.py reads them
where each tool reads them.
"""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

from collections.abc import Callable
from typing import NamedTuple

# the tools whose annotations cmhash reads (``compat:``; all by default)
COMPAT_NAMES = ("reloader", "wave", "kapp")

RELOADER_AUTO = "reloader.stakater.com/auto"
RELOADER_SEARCH = "reloader.stakater.com/search"
RELOADER_MATCH = "reloader.stakater.com/match"
RELOADER_IGNORE = "reloader.stakater.com/ignore"
WAVE_ON = "wave.pusher.com/update-on-config-change"
WAVE_TRUE = "true"  # requiredAnnotationValue (types.go)
# every Reloader and Wave key here holds one of these (a workload with none is selected
# without reading the tables: analyze/declared.py)
KEY_PARTS = ("reloader.stakater.com/", "wave.pusher.com/")
# every annotation of knowledge/placement.py's table holds one of these (a workload with
# none has nothing written in the wrong place, decided without that table)
PLACED_PARTS = ("cmhash.io/", *KEY_PARTS, "kapp.k14s.io/")


class ReloaderKind(NamedTuple):
    """Reloader's annotations for one kind of object (flags.go)."""

    kind: str
    reload: str
    typed_auto: str
    exclude: str


RELOADER_KINDS: tuple[ReloaderKind, ...] = tuple(
    ReloaderKind(
        kind,
        f"{kind.lower()}.reloader.stakater.com/reload",
        f"{kind.lower()}.reloader.stakater.com/auto",
        f"{plural}.exclude.reloader.stakater.com/reload",
    )
    for kind, plural in (
        ("ConfigMap", "configmaps"),
        ("Secret", "secrets"),
        ("SecretProviderClass", "secretproviderclasses"),
    )
)
RELOADER_BY_KIND = {k.kind: k for k in RELOADER_KINDS}
RELOAD_LISTS = {k.reload: k for k in RELOADER_KINDS}


class ReloaderView(NamedTuple):
    """What ShouldReload reads of one workload for one kind."""

    kind: str
    auto: str  # "" when absent, as a missing key reads in Go
    typed_auto: str
    search: str
    excluded: tuple[str, ...]  # the exclude list's names
    field: str  # where auto/typed auto/search/reload list were read


class Case(NamedTuple):
    """One (workload, object) question: would Reloader reload?"""

    view: ReloaderView
    name: str
    listed: bool  # a reload-list pattern of the view's kind matches the name
    match: bool  # the object says reloader.stakater.com/match: "true"
    ignored: bool  # the object says reloader.stakater.com/ignore: "true"
    auto_reload_all: bool  # cmhash's default mode; False under --opt-in


class Rule(NamedTuple):
    name: str
    reloads: bool
    applies: Callable[[Case], bool]
    why: str  # what it says, for explain
    upstream: str  # where Reloader decides it


def go_parse_bool(text: str) -> bool:
    """True for what Go's strconv.ParseBool reads as true (anything else: false or an
    error, which ShouldReload ignores)."""
    return text in ("1", "t", "T", "TRUE", "true", "True")


RELOADER_RULES: tuple[Rule, ...] = (
    Rule(
        "ignore",
        False,
        lambda c: c.ignored,
        f'the object says {RELOADER_IGNORE}: "true"',
        "pkg/common/common.go ShouldReload: IgnoreResourceAnnotation",
    ),
    Rule(
        "exclude",
        False,
        lambda c: c.name in c.view.excluded,
        "named in {exclude}",
        "pkg/common/common.go ShouldReload: checkIfResourceIsExcluded",
    ),
    Rule(
        "reload-list",
        True,
        lambda c: c.listed,
        "a pattern of {reload} matches it",
        'pkg/common/common.go ShouldReload: regexp.Compile("^" + value + "$")',
    ),
    Rule(
        "search-match",
        True,
        lambda c: c.view.search == "true" and c.match,
        f'{RELOADER_SEARCH}: "true" and the object says {RELOADER_MATCH}: "true"',
        'pkg/common/common.go ShouldReload: searchAnnotationValue == "true"',
    ),
    Rule(
        "auto",
        True,
        lambda c: go_parse_bool(c.view.auto) or go_parse_bool(c.view.typed_auto),
        f"{RELOADER_AUTO} or {{typed_auto}} is true",
        "pkg/common/common.go ShouldReload: strconv.ParseBool(reloaderEnabledValue)",
    ),
    Rule(
        "auto-reload-all",
        True,
        lambda c: c.view.auto == "" and c.view.typed_auto == "" and c.auto_reload_all,
        "no Reloader auto annotation says otherwise (every workload, as --auto-reload-all)",
        "pkg/common/common.go ShouldReload: reloaderOpts.AutoReloadAll",
    ),
)
NOT_SELECTED = Rule(
    "not-selected",
    False,
    lambda c: True,
    "Reloader would not reload on it ({detail})",
    "pkg/common/common.go ShouldReload: the final ShouldReload: false",
)


def decide(case: Case) -> Rule:
    """The first of Reloader's rules that applies to ``case`` (NOT_SELECTED: none)."""
    return next((rule for rule in RELOADER_RULES if rule.applies(case)), NOT_SELECTED)


def why(rule: Rule, view: ReloaderView) -> str:
    keys = RELOADER_BY_KIND[view.kind]
    if rule is NOT_SELECTED:
        said = [
            f'{key}: "{value}"'
            for key, value in ((RELOADER_AUTO, view.auto), (keys.typed_auto, view.typed_auto))
            if value
        ]
        detail = (
            ", ".join(said)
            if said
            else f"neither {RELOADER_AUTO} nor {keys.typed_auto} is set, and --opt-in is "
            "Reloader's default mode"
        )
        return rule.why.format(detail=detail)
    return rule.why.format(exclude=keys.exclude, reload=keys.reload, typed_auto=keys.typed_auto)


def split_reloader(value: str) -> list[str]:
    """A Reloader list: split on commas, each item trimmed (strings.TrimSpace)."""
    return [item.strip() for item in value.split(",")]


class WaveItem(NamedTuple):
    namespace: str | None
    name: str


def split_wave(value: str) -> tuple[list[WaveItem], list[str]]:
    """A Wave list as children.go reads it: (the items it uses, the items it skips).
    Not trimmed: Wave looks ``" b"`` up as it is and finds nothing."""
    used: list[WaveItem] = []
    skipped: list[str] = []
    for item in value.split(","):
        parts = item.split("/")
        if len(parts) == 1:
            used.append(WaveItem(None, parts[0]))
        elif len(parts) == 2:
            used.append(WaveItem(parts[0], parts[1]))
        else:
            skipped.append(item)
    return used, skipped


class Declaration(NamedTuple):
    annotation: str
    target: str  # ConfigMap | Secret | SecretProviderClass
    compat: str | None  # None: cmhash's own, always read
    regex: bool = False  # items are anchored regular expressions (Reloader)


DECLARATIONS: tuple[Declaration, ...] = (
    Declaration("cmhash.io/extra-configmaps", "ConfigMap", None),
    Declaration("cmhash.io/extra-secrets", "Secret", None),
    # Reloader's reload lists, one per kind (RELOADER_KINDS: flags.go)
    *(Declaration(k.reload, k.kind, "reloader", regex=True) for k in RELOADER_KINDS),
    # wave-k8s/wave pkg/core/types.go ExtraConfigMapsAnnotation, ExtraSecretsAnnotation
    Declaration("wave.pusher.com/extra-configmaps", "ConfigMap", "wave"),
    Declaration("wave.pusher.com/extra-secrets", "Secret", "wave"),
)

# kapp's explicit reference to a versioned object, and any key with it as a prefix and
# a "." (carvel-dev/kapp pkg/kapp/diff/explicit_versioned_ref.go explicitReferenceKey,
# explicitReferenceKeyPrefix): a YAML mapping {apiVersion, kind, name}
KAPP_REF = "kapp.k14s.io/versioned-explicit-ref"

# a ConfigMap's or Secret's own annotations that leave it out of every checksum, and the
# tool each belongs to (None: cmhash's own)
CONFIG_EXCLUDED = {"cmhash.io/skip": None, RELOADER_IGNORE: "reloader"}
