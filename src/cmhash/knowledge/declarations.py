"""Annotations that declare a workload's dependencies the pod spec does not show, and
those by which a ConfigMap or Secret leaves every checksum: cmhash's own and other
tools' (Reloader, Wave, kapp), each gated by its tool's name in ``compat:`` (None:
cmhash's own, always read). analyze/declared.py reads them where each tool reads them.
"""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

from typing import NamedTuple

from cmhash.knowledge.compat import RELOADER_IGNORE, RELOADER_KINDS


class Declaration(NamedTuple):
    annotation: str
    target: str  # ConfigMap | Secret | SecretProviderClass
    compat: str | None  # None: cmhash's own, always read
    regex: bool = False  # items are anchored regular expressions (Reloader)


DECLARATIONS: tuple[Declaration, ...] = (
    Declaration("cmhash.io/extra-configmaps", "ConfigMap", None),
    Declaration("cmhash.io/extra-secrets", "Secret", None),
    # Reloader's reload lists, one per kind (compat.py RELOADER_KINDS: flags.go)
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
