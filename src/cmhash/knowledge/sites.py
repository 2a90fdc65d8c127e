"""A reference site: where a pod spec (or an operator's resource) names a ConfigMap or
Secret. The rows are in podspec.py (pod specs) and operators.py (operators' resources)."""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

from typing import NamedTuple


class Site(NamedTuple):
    path: tuple[str, ...]  # from a container (or the pod spec); "*" = every list item
    target: str  # "ConfigMap" | "Secret" | "SecretProviderClass"
    how: (
        str  # env | envFrom | volume | projected | csi | volume-plugin | imagePullSecret | operator
    )
    # the name's field in the mapping at ``path``; "" when the node at ``path`` is the
    # name itself (an item of a list of names: the Prometheus operator's spec.secrets)
    name_field: str = "name"
    key_field: str | None = None  # one named key
    items_field: str | None = None  # a list of {key: ...}
    optional_field: str | None = "optional"
