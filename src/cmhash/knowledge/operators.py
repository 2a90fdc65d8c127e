"""Operators' resources that run pods without a pod template in the input: a profile per
kind says where the operator copies annotations to its pods, which blocks are
pod-spec-like (``containers``, ``initContainers``, ``volumes``), and which other fields
name ConfigMaps and Secrets the pods mount.

A change to a Secret that a Prometheus lists in ``spec.secrets`` reaches its pods only
when they restart; Reloader cannot restart them (it patches the StatefulSet, and the
operator reverts it: stakater/Reloader#972, #555, #1057, #1192). cmhash writes the
checksum where the operator copies it to the pods' template, so the operator rolls them.

Each row is checked against the operator's published CRD schema
(``tests/knowledge/test_operators.py``, the CRDs vendored in ``tests/crds``), and each
place an operator copies annotations from is cited below.
"""

from __future__ import annotations

from typing import Any

from cmhash.knowledge.podspec import CONTAINER_SITES, Site

PODMETADATA = ("podMetadata", "annotations")


def names(*path: str, target: str) -> Site:
    """A list of object names (``spec.secrets: [a, b]``): each object whole."""
    return Site((*path, "*"), target, "operator", name_field="", optional_field=None)


def named(*path: str, target: str) -> Site:
    """One object's name as a string field (``spec.configSecret: am-config``)."""
    return Site(path, target, "operator", name_field="", optional_field=None)


def key_ref(*path: str, target: str = "Secret") -> Site:
    """A ``{name, key, optional}`` selector: that key only."""
    return Site(path, target, "operator", key_field="key")


def env_sites(*path: str) -> tuple[Site, ...]:
    """A container's ``env`` and ``envFrom`` kept elsewhere (``path`` holds the lists'
    parent and their names: VictoriaMetrics' ``extraEnvs``/``extraEnvsFrom``)."""
    *parent, env, env_from = path
    lists = {"env": env, "envFrom": env_from}
    return tuple(s._replace(path=(*parent, lists[s.path[0]], *s.path[1:])) for s in CONTAINER_SITES)


def _profile(
    group: str,
    kind: str,
    operator: str,
    sites: tuple[Site, ...],
    level: tuple[str, ...] = PODMETADATA,
    defaults: tuple[tuple[str, str, str], ...] = (),
    component: str | None = None,
    pod: tuple[str, ...] | None = None,
    live: tuple[tuple[str, str], ...] = (),
) -> dict[str, Any]:
    """A profile: the fields of its kinds.WorkloadKind row (made there, which imports
    this module). ``component``: one pod group of a resource that runs several, whose
    block (``spec.<component>``) holds its annotations, its pod-spec-like fields and the
    paths of ``sites`` (given from that block). ``pod``: the pod-spec-like block, from
    the root, when it is not that block itself (Strimzi's ``spec.template.pod``).
    ``live``: (field, how) for the fields whose objects the operator's own reloader
    applies without a restart (see LIVE)."""
    block = ("spec",) if component is None else ("spec", component)
    if component is not None:
        sites = tuple(s._replace(path=(*block, *s.path)) for s in sites)
    return {
        "group": group,
        "kind": kind,
        "template_path": block,
        "level": level,
        "spec_path": block if pod is None else pod,
        "sites": sites,
        "operator": operator,
        "defaults": defaults,
        "component": component,
        "live": live,
    }


_PROM = "the Prometheus operator"


def _prom(kind: str, sites: tuple[Site, ...], **more: Any) -> dict[str, Any]:
    return _profile("monitoring.coreos.com", kind, _PROM, sites, **more)


# What the Prometheus operator's config-reloader sidecar applies without a restart
# (prometheus-operator at 6adcebc5076c; cmd/prometheus-config-reloader/main.go: it
# watches --config-file and each --watched-dir and calls the reload URL). Left out of the
# checksum by default (plan/resolve.py; --hash-live-reloaded counts them): a change
# reaches the running pods without rolling them.
# - Prometheus, PrometheusAgent: the operator reads the additional* Secrets' keys
#   (pkg/prometheus/server/operator.go l.1610-1621 and pkg/prometheus/agent/
#   operator.go l.974 k8s.LoadSecretRef; a Secret's change re-queues the resource, the
#   informer at server/operator.go l.598) into the generated configuration Secret, the
#   reloader's --config-file (pkg/prometheus/common.go BuildConfigReloader:
#   operator.ConfigFile). Its spec.secrets and spec.configMaps are mounted into the
#   prometheus container only, never watched: they stay counted.
# - Alertmanager: configSecret (default alertmanager-<name>) is read by the operator
#   (pkg/alertmanager/operator.go l.864-868) into alertmanager-<name>-generated, mounted
#   at /etc/alertmanager/config, the first watched directory (pkg/alertmanager/
#   statefulset.go l.514); every spec.secrets and spec.configMaps mount is a watched
#   directory too (l.613, l.641).
# - ThanosRuler: the reloader watches only the rule ConfigMaps the operator makes
#   (pkg/thanos/statefulset.go l.356-415); its configuration Secrets are mounted
#   unwatched: they stay counted.
_GENERATED = (
    "the Prometheus operator reads it into the configuration it generates, which its "
    "config-reloader applies without a restart"
)
_WATCHED = "the Prometheus operator's config-reloader watches its mount and reloads"
_MOUNTED = (
    names("spec", "secrets", target="Secret"),
    names("spec", "configMaps", target="ConfigMap"),
)

# prometheus-operator pkg/prometheus/server/statefulset.go, pkg/alertmanager/statefulset.go
# (maps.Copy(podAnnotations, a.Spec.PodMetadata.Annotations)), pkg/thanos/statefulset.go:
# spec.podMetadata.annotations land on the StatefulSet's pod template; spec.secrets and
# spec.configMaps are mounted as volumes (alertmanager/statefulset.go: range a.Spec.Secrets)
PROMETHEUS_OPERATOR: tuple[dict[str, Any], ...] = (
    _prom(
        "Prometheus",
        (
            *_MOUNTED,
            key_ref("spec", "additionalScrapeConfigs"),
            key_ref("spec", "additionalAlertRelabelConfigs"),
            key_ref("spec", "additionalAlertManagerConfigs"),
        ),
        live=(
            ("spec.additionalScrapeConfigs", _GENERATED),
            ("spec.additionalAlertRelabelConfigs", _GENERATED),
            ("spec.additionalAlertManagerConfigs", _GENERATED),
        ),
    ),
    _prom(
        "PrometheusAgent",
        (*_MOUNTED, key_ref("spec", "additionalScrapeConfigs")),
        live=(("spec.additionalScrapeConfigs", _GENERATED),),
    ),
    # the configuration Secret defaults to alertmanager-<name>
    # (alertmanager/statefulset.go defaultConfigSecretName: prefixedName(am.Name))
    _prom(
        "Alertmanager",
        (*_MOUNTED, named("spec", "configSecret", target="Secret")),
        defaults=(("spec.configSecret", "Secret", "alertmanager-{name}"),),
        live=(
            ("spec.configSecret", _GENERATED),
            ("spec.secrets", _WATCHED),
            ("spec.configMaps", _WATCHED),
        ),
    ),
    _prom(
        "ThanosRuler",
        (
            key_ref("spec", "objectStorageConfig"),
            key_ref("spec", "queryConfig"),
            key_ref("spec", "alertmanagersConfig"),
            key_ref("spec", "alertRelabelConfigs"),
            key_ref("spec", "tracingConfig"),
        ),
    ),
)

_VM = "the VictoriaMetrics operator"


def _vm(kind: str, sites: tuple[Site, ...], **more: Any) -> dict[str, Any]:
    return _profile("operator.victoriametrics.com", kind, _VM, sites, **more)


_VM_COMMON = (
    names("spec", "secrets", target="Secret"),
    names("spec", "configMaps", target="ConfigMap"),
    *env_sites("spec", "extraEnvs", "extraEnvsFrom"),
)

# What the VictoriaMetrics operator's config-reloader applies without a restart, as the
# Prometheus operator's does (VictoriaMetrics docs/operator/vmalertmanager-configuration.md:
# the operator generates vmalertmanager-<name>-config from spec.configSecret and the
# VMAlertmanagerConfigs, "mounted at VMAlertmanager Pod. A special side-car container
# tracks its changes and sends config-reload signals"; api/operator/v1beta1
# vmalertmanager_types.go Validate: configSecret may not be that built-in config
# secret's name; docs/operator/configuration_syncronization.MD: VMAgent's scrape
# configuration, additionalScrapeConfigs included, is the generated Secret its
# config-reloader watches)
_VM_GENERATED = (
    "the VictoriaMetrics operator reads it into the configuration it generates, which its "
    "config-reloader applies without a restart"
)

# VictoriaMetrics operator: spec.podMetadata.annotations are the pods' annotations
# (internal/controller/operator/factory/build: PodMetadata), spec.secrets and
# spec.configMaps are mounted, extraEnvs/extraEnvsFrom are the main container's env
VICTORIAMETRICS_OPERATOR: tuple[dict[str, Any], ...] = (
    _vm(
        "VMAgent",
        (
            *_VM_COMMON,
            key_ref("spec", "additionalScrapeConfigs"),
            key_ref("spec", "relabelConfig", target="ConfigMap"),
        ),
        live=(("spec.additionalScrapeConfigs", _VM_GENERATED),),
    ),
    _vm(
        "VMAlert",
        (*_VM_COMMON, key_ref("spec", "notifierConfigRef")),
    ),
    _vm(
        "VMAlertmanager",
        (*_VM_COMMON, named("spec", "configSecret", target="Secret")),
        live=(("spec.configSecret", _VM_GENERATED),),
    ),
    _vm(
        "VMSingle",
        (*_VM_COMMON, key_ref("spec", "relabelConfig", target="ConfigMap")),
    ),
    _vm(
        "VMAuth",
        (*_VM_COMMON, named("spec", "configSecret", target="Secret")),
    ),
)

# VMCluster: three pod groups, each with its own podMetadata, secrets, configMaps,
# extraEnvs/extraEnvsFrom and pod-spec fields (api/operator/v1beta1/vmcluster_types.go
# PodAnnotations(kind) -> spec.<component>.podMetadata.annotations;
# internal/controller/operator/factory/vmcluster/vmcluster.go makePodSpecForVMSelect
# (l.689-719: range cr.Spec.VMSelect.Secrets / .ConfigMaps mounted; l.763: Annotations:
# cr.PodAnnotations(ClusterComponentSelect)), makePodSpecForVMInsert (l.914-987) and
# makePodSpecForVMStorage (l.1147: vmBackup.credentialsSecret mounted; l.1227: the
# vmbackupmanager container in the vmstorage pod: build/backup.go l.100-113, its
# -credsFilePath names the key, and vmBackup.extraEnvs/extraEnvsFrom are its env; l.1269)).
# spec.license.keyRef is left out: the pods re-read the license file every
# license.reloadInterval, without a restart.
_VM_GROUP = (
    names("secrets", target="Secret"),
    names("configMaps", target="ConfigMap"),
    *env_sites("extraEnvs", "extraEnvsFrom"),
)
VMCLUSTER: tuple[dict[str, Any], ...] = (
    _vm("VMCluster", _VM_GROUP, component="vminsert"),
    _vm("VMCluster", _VM_GROUP, component="vmselect"),
    _vm(
        "VMCluster",
        (
            *_VM_GROUP,
            key_ref("vmBackup", "credentialsSecret"),
            *env_sites("vmBackup", "extraEnvs", "extraEnvsFrom"),
        ),
        component="vmstorage",
    ),
)


def _cluster(kind: str, groups: tuple[str, ...]) -> tuple[dict[str, Any], ...]:
    return tuple(_vm(kind, _VM_GROUP, component=g) for g in groups)


# VictoriaLogs and VictoriaTraces, built like a VMCluster and a VMSingle (api/operator/v1/
# vlcluster_types.go and vtcluster_types.go PodMetadata(kind): spec.<group>.podMetadata;
# factory/vlcluster/vlinsert.go l.195-266, vlselect.go l.301-372, vlstorage.go l.297;
# factory/vtcluster/insert.go l.184-255, select.go l.297-368, storage.go l.291;
# factory/vlsingle/vlsingle.go l.240-312, factory/vtsingle/vtsingle.go l.239-303: the
# group's secrets and configMaps mounted, extraEnvsFrom its container's envFrom, its
# podMetadata.annotations the pods')
VICTORIALOGS_TRACES: tuple[dict[str, Any], ...] = (
    *_cluster("VLCluster", ("vlinsert", "vlselect", "vlstorage")),
    *_cluster("VTCluster", ("insert", "select", "storage")),
    _vm("VLSingle", _VM_COMMON),
    _vm("VTSingle", _VM_COMMON),
)

# OpenTelemetry Operator internal/manifests/collector/deployment.go (and daemonset.go,
# statefulset.go): manifestutils.PodAnnotations copies spec.podAnnotations to the pods;
# spec.env/envFrom are the collector container's, spec.configmaps are mounted whole
OPENTELEMETRY_OPERATOR: tuple[dict[str, Any], ...] = (
    _profile(
        "opentelemetry.io",
        "OpenTelemetryCollector",
        "the OpenTelemetry Operator",
        (
            *env_sites("spec", "env", "envFrom"),
            Site(("spec", "configmaps", "*"), "ConfigMap", "operator", optional_field=None),
            *(
                s._replace(path=("spec", "additionalContainers", "*", *s.path))
                for s in CONTAINER_SITES
            ),
        ),
        level=("podAnnotations",),
    ),
)

# Strimzi (strimzi/strimzi-kafka-operator 8541da1e336b): KafkaConnectCluster.generatePodSet
# (cluster-operator/.../model/KafkaConnectCluster.java) builds each pod with
# WorkloadUtils.createStatefulPod, which puts spec.template.pod.metadata.annotations on it,
# and a pod whose strimzi.io/revision (model/PodRevision.java: a hash of the whole pod,
# annotations included) changed is rolled. spec.template.pod.volumes are the pods'
# (KafkaConnectCluster.getVolumes -> TemplateUtils.addAdditionalVolumes; api/.../common/
# template/AdditionalVolume.java: secret, configMap and csi as in core/v1), and
# spec.template.connectContainer.env and .initContainer.env the containers' env
# (ContainerUtils.addContainerEnvsToExistingEnvs; ContainerEnvVarSource: secretKeyRef,
# configMapKeyRef; no envFrom). Left out: what the operator already hashes into the pods'
# annotations (spec.tls.trustedCertificates and spec.authentication: strimzi.io/auth-hash;
# spec.config: strimzi.io/configuration-hash; assembly/KafkaConnectAssemblyOperator.java
# createOrUpdate), spec.logging and spec.metricsConfig (copied into the operator's own
# ConfigMap: the loggers are set through Connect's REST API, the JMX exporter re-reads its
# file), spec.template.pod.templatedVolumes (names rendered per pod) and the build pods.
_CONNECT_ENV = tuple(
    s._replace(path=("spec", "template", container, *s.path))
    for container in ("connectContainer", "initContainer")  # (the init container: with spec.rack)
    for s in CONTAINER_SITES
    if s.how == "env"
)
STRIMZI: tuple[dict[str, Any], ...] = (
    _profile(
        "kafka.strimzi.io",
        "KafkaConnect",
        "the Strimzi Cluster Operator",
        _CONNECT_ENV,
        level=("template", "pod", "metadata", "annotations"),
        pod=("spec", "template", "pod"),
    ),
)

# Resources that run no pods of their own in some mode, so that their annotation rolls
# nothing: (group, kind) -> (the field, its value in that mode). A sidecar-mode
# OpenTelemetryCollector is injected by the operator's webhook into the pods that ask
# for it (sidecar.opentelemetry.io/inject), when they are created; a change to the
# collector restarts none of them, by design (open-telemetry/opentelemetry-operator
# issues 553 and 2078; internal/webhook/podmutation).
INJECTED: dict[tuple[str, str], tuple[tuple[str, ...], str]] = {
    ("opentelemetry.io", "OpenTelemetryCollector"): (("spec", "mode"), "sidecar"),
}

OPERATOR_PROFILES = (
    PROMETHEUS_OPERATOR
    + VICTORIAMETRICS_OPERATOR
    + VMCLUSTER
    + VICTORIALOGS_TRACES
    + OPENTELEMETRY_OPERATOR
    + STRIMZI
)


def live_reload(live: tuple[tuple[str, str], ...], field: str) -> str | None:
    """How the operator applies the object a reference at ``field`` names without a
    restart (a profile's ``live`` row whose field it is, or an item of), else None."""
    for prefix, how in live:
        if field == prefix or field.startswith((prefix + "[", prefix + ".")):
            return how
    return None
