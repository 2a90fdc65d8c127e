"""Where a PodSpec names ConfigMaps and Secrets: a data table of reference sites
(``Site`` rows; an operator's resource has its own in operators.py), walked by
analyze/refs.py.

Sites are walked in ``initContainers`` and ``containers`` (never
``ephemeralContainers``: they exist only on live Pods) and in ``volumes``.
A site that names keys (``configMapKeyRef.key``, ``items[].key``) depends on
those keys only; ``envFrom`` and whole volumes depend on every key.

Each row cites its field in k8s.io/api ``core/v1/types.go`` (cited below as
``core/v1``), unless another project defines it.
"""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

from typing import NamedTuple


class Site(NamedTuple):
    """A reference site: where a pod spec (or an operator's resource) names a ConfigMap or
    Secret."""

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


# core/v1 PodSpec.InitContainers, PodSpec.Containers (PodSpec.EphemeralContainers: left out)
CONTAINER_LISTS = ("initContainers", "containers")


CONTAINER_SITES: tuple[Site, ...] = (
    # core/v1 EnvVarSource.ConfigMapKeyRef (ConfigMapKeySelector: name, key, optional)
    Site(("env", "*", "valueFrom", "configMapKeyRef"), "ConfigMap", "env", key_field="key"),
    # core/v1 EnvVarSource.SecretKeyRef (SecretKeySelector: name, key, optional)
    Site(("env", "*", "valueFrom", "secretKeyRef"), "Secret", "env", key_field="key"),
    # core/v1 EnvFromSource.ConfigMapRef (ConfigMapEnvSource: name, optional)
    Site(("envFrom", "*", "configMapRef"), "ConfigMap", "envFrom"),
    # core/v1 EnvFromSource.SecretRef (SecretEnvSource: name, optional)
    Site(("envFrom", "*", "secretRef"), "Secret", "envFrom"),
)

POD_SITES: tuple[Site, ...] = (
    # core/v1 VolumeSource.ConfigMap (ConfigMapVolumeSource: name, items []KeyToPath, optional)
    Site(("volumes", "*", "configMap"), "ConfigMap", "volume", items_field="items"),
    # core/v1 VolumeSource.Secret (SecretVolumeSource: secretName, items, optional)
    Site(
        ("volumes", "*", "secret"), "Secret", "volume", name_field="secretName", items_field="items"
    ),
    # core/v1 ProjectedVolumeSource.Sources, VolumeProjection.ConfigMap (ConfigMapProjection)
    Site(
        ("volumes", "*", "projected", "sources", "*", "configMap"),
        "ConfigMap",
        "projected",
        items_field="items",
    ),
    # core/v1 VolumeProjection.Secret (SecretProjection: name, items, optional)
    Site(
        ("volumes", "*", "projected", "sources", "*", "secret"),
        "Secret",
        "projected",
        items_field="items",
    ),
    # core/v1 CSIVolumeSource.NodePublishSecretRef (LocalObjectReference): read when the
    # volume is mounted (credentials for the driver), never by the app; a missing one
    # still keeps the pod from starting
    Site(("volumes", "*", "csi", "nodePublishSecretRef"), "Secret", "csi", optional_field=None),
    # the Secrets Store CSI driver mounts what its SecretProviderClass fetches
    # (sources.py): core/v1 CSIVolumeSource.VolumeAttributes, the driver's key
    # (secrets-store-csi-driver pkg/secrets-store/nodeserver.go secretProviderClassField)
    Site(
        ("volumes", "*", "csi", "volumeAttributes"),
        "SecretProviderClass",
        "csi",
        name_field="secretProviderClass",
        optional_field=None,
    ),
    # core/v1 {CephFS,RBD,ISCSI,FlexVolume,ScaleIO,StorageOS}VolumeSource.SecretRef
    # (LocalObjectReference): the volume plugin's credentials
    *(
        Site(("volumes", "*", plugin, "secretRef"), "Secret", "volume-plugin", optional_field=None)
        for plugin in ("cephfs", "rbd", "iscsi", "flexVolume", "scaleIO", "storageos")
    ),
    # core/v1 AzureFileVolumeSource.SecretName
    Site(
        ("volumes", "*", "azureFile"),
        "Secret",
        "volume-plugin",
        name_field="secretName",
        optional_field=None,
    ),
)

# the sites whose files a container reads (what a subPath mount can freeze)
FILE_SITES = frozenset(("volume", "projected"))

# core/v1 PodSpec.ImagePullSecrets (LocalObjectReference): only with --image-pull-secrets
IMAGE_PULL_SITE = Site(("imagePullSecrets", "*"), "Secret", "imagePullSecret", optional_field=None)

# core/v1 VolumeMount.SubPath and SubPathExpr: the kubelet never updates a file mounted
# by subPath in place; only a new pod sees a change
SUBPATH_FIELDS = ("subPath", "subPathExpr")
