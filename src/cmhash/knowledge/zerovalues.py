"""Which pod-template fields the API server stores as absent when they hold their zero
value, as a table of the Go types they are decoded into.

A built-in workload (Deployment, StatefulSet, DaemonSet, Job, CronJob, ...) is decoded
into the Go structs of k8s.io/api ``core/v1/types.go`` before it is stored. A field whose
Go type is not a pointer holds no "absent": ``hostNetwork: false``, ``workingDir: ""``,
``timeoutSeconds: 0`` and a field left out decode to the same value, and so do an empty
list (any Go slice: ``tolerations: []``, ``args: []``) or an empty map
(``nodeSelector: {}``, ``resources: {limits: {}}``) and a left-out one; the stored
object, its ControllerRevision and the Deployment controller's comparison
(``apiequality.Semantic.DeepEqual``, which takes nil and empty slices and maps as equal:
k8s.io/apimachinery pkg/api/equality/semantic.go) are the same, and nothing rolls. A
pointer field (``securityContext: {}`` in a container, ``affinity: {}``,
``enableServiceLinks: false``, ``terminationGracePeriodSeconds: 0``) holds what it says:
an empty struct or a zero there is a value, not the field left out.

``TYPES``: each key is a struct of core/v1 types.go (kubernetes/api at 10b39a39bcee,
``type <key> struct``; embedded structs are inlined, as encoding/json does: Volume's
VolumeSource, EphemeralContainer's EphemeralContainerCommon, Probe's ProbeHandler), each
field as ``name type``: ``0`` a non-pointer scalar (bool, number, string; its zero is
absent), ``{}`` a map (empty is absent), ``[]`` a slice of scalars, ``[]T`` a slice of
struct T (empty is absent), ``T`` a non-pointer struct (all-zero is absent), ``*T`` a
pointer to struct T (present even when empty). Fields not listed (pointers to scalars:
``*bool``, ``*int64``, ``*string``; types of other packages) are kept as written.
``ObjectMeta`` is from k8s.io/apimachinery pkg/apis/meta/v1/types.go (its labels and
annotations maps).

``TYPED``: the kinds whose pod template is read this way: the built-in kinds (the API
server decodes them), and an Argo Rollout, a custom resource stored as sent whose
controller decodes the template into core/v1 Go types and finds its ReplicaSet by
``json.Marshal`` of it (argoproj/argo-rollouts utils/hash/hash.go
ComputePodTemplateHash: omitempty leaves the zero values out) or by
``apiequality.Semantic`` (utils/replicaset/replicaset.go PodTemplateEqualIgnoreHash).
Other custom resources (a Knative Service: a new Revision per generation of the stored
JSON) keep what they were sent.
"""

from __future__ import annotations

from functools import cache
from typing import Any

ROOT = "PodTemplateSpec"
TYPED_CUSTOM = frozenset(
    {("argoproj.io", "Rollout")}
)  # (group, kind); built-ins: all  # a Pod's metadata and spec have the same types

TYPES: dict[str, str] = {
    "PodTemplateSpec": "metadata ObjectMeta; spec PodSpec",
    "ObjectMeta": "name 0; generateName 0; namespace 0; labels {}; annotations {}",
    "PodSpec": (
        "volumes []Volume; initContainers []Container; containers []Container; "
        "ephemeralContainers []EphemeralContainer; restartPolicy 0; dnsPolicy 0; "
        "nodeSelector {}; serviceAccountName 0; serviceAccount 0; nodeName 0; hostNetwork 0; "
        "hostPID 0; hostIPC 0; securityContext *PodSecurityContext; "
        "imagePullSecrets []LocalObjectReference; hostname 0; subdomain 0; affinity *Affinity; "
        "schedulerName 0; tolerations []Toleration; hostAliases []HostAlias; "
        "priorityClassName 0; dnsConfig *PodDNSConfig; readinessGates []PodReadinessGate; "
        "overhead {}; topologySpreadConstraints []TopologySpreadConstraint; os *PodOS; "
        "schedulingGates []PodSchedulingGate; resourceClaims []PodResourceClaim; "
        "resources *ResourceRequirements; evictionResponders []EvictionResponder"
    ),
    "Volume": (
        "name 0; hostPath *HostPathVolumeSource; emptyDir *EmptyDirVolumeSource; "
        "gcePersistentDisk *GCEPersistentDiskVolumeSource; "
        "awsElasticBlockStore *AWSElasticBlockStoreVolumeSource; gitRepo *GitRepoVolumeSource; "
        "secret *SecretVolumeSource; nfs *NFSVolumeSource; iscsi *ISCSIVolumeSource; "
        "glusterfs *GlusterfsVolumeSource; "
        "persistentVolumeClaim *PersistentVolumeClaimVolumeSource; rbd *RBDVolumeSource; "
        "flexVolume *FlexVolumeSource; cinder *CinderVolumeSource; cephfs *CephFSVolumeSource; "
        "flocker *FlockerVolumeSource; downwardAPI *DownwardAPIVolumeSource; fc *FCVolumeSource; "
        "azureFile *AzureFileVolumeSource; configMap *ConfigMapVolumeSource; "
        "vsphereVolume *VsphereVirtualDiskVolumeSource; quobyte *QuobyteVolumeSource; "
        "azureDisk *AzureDiskVolumeSource; "
        "photonPersistentDisk *PhotonPersistentDiskVolumeSource; "
        "projected *ProjectedVolumeSource; portworxVolume *PortworxVolumeSource; "
        "scaleIO *ScaleIOVolumeSource; storageos *StorageOSVolumeSource; csi *CSIVolumeSource; "
        "ephemeral *EphemeralVolumeSource; image *ImageVolumeSource"
    ),
    "HostPathVolumeSource": "path 0",
    "EmptyDirVolumeSource": "medium 0",
    "GCEPersistentDiskVolumeSource": "pdName 0; fsType 0; partition 0; readOnly 0",
    "AWSElasticBlockStoreVolumeSource": "volumeID 0; fsType 0; partition 0; readOnly 0",
    "GitRepoVolumeSource": "repository 0; revision 0; directory 0",
    "SecretVolumeSource": "secretName 0; items []KeyToPath",
    "KeyToPath": "key 0; path 0",
    "NFSVolumeSource": "server 0; path 0; readOnly 0",
    "ISCSIVolumeSource": (
        "targetPortal 0; iqn 0; lun 0; iscsiInterface 0; fsType 0; readOnly 0; portals []; "
        "chapAuthDiscovery 0; chapAuthSession 0; secretRef *LocalObjectReference"
    ),
    "LocalObjectReference": "name 0",
    "GlusterfsVolumeSource": "endpoints 0; path 0; readOnly 0",
    "PersistentVolumeClaimVolumeSource": "claimName 0; readOnly 0",
    "RBDVolumeSource": (
        "monitors []; image 0; fsType 0; pool 0; user 0; keyring 0; "
        "secretRef *LocalObjectReference; readOnly 0"
    ),
    "FlexVolumeSource": (
        "driver 0; fsType 0; secretRef *LocalObjectReference; readOnly 0; options {}"
    ),
    "CinderVolumeSource": "volumeID 0; fsType 0; readOnly 0; secretRef *LocalObjectReference",
    "CephFSVolumeSource": (
        "monitors []; path 0; user 0; secretFile 0; secretRef *LocalObjectReference; readOnly 0"
    ),
    "FlockerVolumeSource": "datasetName 0; datasetUUID 0",
    "DownwardAPIVolumeSource": "items []DownwardAPIVolumeFile",
    "DownwardAPIVolumeFile": (
        "path 0; fieldRef *ObjectFieldSelector; resourceFieldRef *ResourceFieldSelector"
    ),
    "ObjectFieldSelector": "apiVersion 0; fieldPath 0",
    "ResourceFieldSelector": "containerName 0; resource 0; divisor 0",
    "FCVolumeSource": "targetWWNs []; fsType 0; readOnly 0; wwids []",
    "AzureFileVolumeSource": "secretName 0; shareName 0; readOnly 0",
    "ConfigMapVolumeSource": "name 0; items []KeyToPath",
    "VsphereVirtualDiskVolumeSource": (
        "volumePath 0; fsType 0; storagePolicyName 0; storagePolicyID 0"
    ),
    "QuobyteVolumeSource": "registry 0; volume 0; readOnly 0; user 0; group 0; tenant 0",
    "AzureDiskVolumeSource": "diskName 0; diskURI 0",
    "PhotonPersistentDiskVolumeSource": "pdID 0; fsType 0",
    "ProjectedVolumeSource": "sources []VolumeProjection",
    "VolumeProjection": (
        "secret *SecretProjection; downwardAPI *DownwardAPIProjection; "
        "configMap *ConfigMapProjection; serviceAccountToken *ServiceAccountTokenProjection; "
        "clusterTrustBundle *ClusterTrustBundleProjection; "
        "podCertificate *PodCertificateProjection"
    ),
    "SecretProjection": "name 0; items []KeyToPath",
    "DownwardAPIProjection": "items []DownwardAPIVolumeFile",
    "ConfigMapProjection": "name 0; items []KeyToPath",
    "ServiceAccountTokenProjection": "audience 0; path 0",
    "ClusterTrustBundleProjection": "path 0",
    "PodCertificateProjection": (
        "signerName 0; keyType 0; credentialBundlePath 0; keyPath 0; certificateChainPath 0; "
        "userAnnotations {}"
    ),
    "PortworxVolumeSource": "volumeID 0; fsType 0; readOnly 0",
    "ScaleIOVolumeSource": (
        "gateway 0; system 0; secretRef *LocalObjectReference; sslEnabled 0; protectionDomain 0; "
        "storagePool 0; storageMode 0; volumeName 0; fsType 0; readOnly 0"
    ),
    "StorageOSVolumeSource": (
        "volumeName 0; volumeNamespace 0; fsType 0; readOnly 0; secretRef *LocalObjectReference"
    ),
    "CSIVolumeSource": (
        "driver 0; volumeAttributes {}; nodePublishSecretRef *LocalObjectReference"
    ),
    "EphemeralVolumeSource": "volumeClaimTemplate *PersistentVolumeClaimTemplate",
    "PersistentVolumeClaimTemplate": "metadata 0; spec PersistentVolumeClaimSpec",
    "PersistentVolumeClaimSpec": (
        "accessModes []; resources VolumeResourceRequirements; volumeName 0; "
        "dataSource *TypedLocalObjectReference; dataSourceRef *TypedObjectReference"
    ),
    "VolumeResourceRequirements": "limits {}; requests {}",
    "TypedLocalObjectReference": "kind 0; name 0",
    "TypedObjectReference": "kind 0; name 0",
    "ImageVolumeSource": "reference 0; pullPolicy 0",
    "Container": (
        "name 0; image 0; command []; args []; workingDir 0; ports []ContainerPort; "
        "envFrom []EnvFromSource; env []EnvVar; resources ResourceRequirements; "
        "resizePolicy []ContainerResizePolicy; restartPolicyRules []ContainerRestartRule; "
        "volumeMounts []VolumeMount; volumeDevices []VolumeDevice; livenessProbe *Probe; "
        "readinessProbe *Probe; startupProbe *Probe; lifecycle *Lifecycle; "
        "terminationMessagePath 0; terminationMessagePolicy 0; imagePullPolicy 0; "
        "securityContext *SecurityContext; stdin 0; stdinOnce 0; tty 0"
    ),
    "ContainerPort": "name 0; hostPort 0; containerPort 0; protocol 0; hostIP 0",
    "EnvFromSource": "prefix 0; configMapRef *ConfigMapEnvSource; secretRef *SecretEnvSource",
    "ConfigMapEnvSource": "name 0",
    "SecretEnvSource": "name 0",
    "EnvVar": "name 0; value 0; valueFrom *EnvVarSource",
    "EnvVarSource": (
        "fieldRef *ObjectFieldSelector; resourceFieldRef *ResourceFieldSelector; "
        "configMapKeyRef *ConfigMapKeySelector; secretKeyRef *SecretKeySelector; "
        "fileKeyRef *FileKeySelector"
    ),
    "ConfigMapKeySelector": "name 0; key 0",
    "SecretKeySelector": "name 0; key 0",
    "FileKeySelector": "volumeName 0; path 0; key 0",
    "ResourceRequirements": "limits {}; requests {}; claims []ResourceClaim",
    "ResourceClaim": "name 0; request 0",
    "ContainerResizePolicy": "resourceName 0; restartPolicy 0",
    "ContainerRestartRule": "action 0; exitCodes *ContainerRestartRuleOnExitCodes",
    "ContainerRestartRuleOnExitCodes": "operator 0; values []",
    "VolumeMount": (
        "name 0; readOnly 0; mountPath 0; subPath 0; subPathExpr 0; bindMountOptions []"
    ),
    "VolumeDevice": "name 0; devicePath 0",
    "Probe": (
        "exec *ExecAction; httpGet *HTTPGetAction; tcpSocket *TCPSocketAction; grpc *GRPCAction; "
        "initialDelaySeconds 0; timeoutSeconds 0; periodSeconds 0; successThreshold 0; "
        "failureThreshold 0"
    ),
    "ExecAction": "command []",
    "HTTPGetAction": "path 0; port 0; host 0; scheme 0; httpHeaders []HTTPHeader",
    "HTTPHeader": "name 0; value 0",
    "TCPSocketAction": "port 0; host 0",
    "GRPCAction": "port 0",
    "Lifecycle": "postStart *LifecycleHandler; preStop *LifecycleHandler",
    "LifecycleHandler": (
        "exec *ExecAction; httpGet *HTTPGetAction; tcpSocket *TCPSocketAction; sleep *SleepAction"
    ),
    "SleepAction": "seconds 0",
    "SecurityContext": (
        "capabilities *Capabilities; seLinuxOptions *SELinuxOptions; "
        "seccompProfile *SeccompProfile; appArmorProfile *AppArmorProfile"
    ),
    "Capabilities": "add []; drop []",
    "SELinuxOptions": "user 0; role 0; type 0; level 0",
    "SeccompProfile": "type 0",
    "AppArmorProfile": "type 0",
    "PodSecurityContext": (
        "seLinuxOptions *SELinuxOptions; supplementalGroups []; sysctls []Sysctl; "
        "seccompProfile *SeccompProfile; appArmorProfile *AppArmorProfile"
    ),
    "Sysctl": "name 0; value 0",
    "Affinity": (
        "nodeAffinity *NodeAffinity; podAffinity *PodAffinity; podAntiAffinity *PodAntiAffinity"
    ),
    "NodeAffinity": (
        "requiredDuringSchedulingIgnoredDuringExecution *NodeSelector; "
        "preferredDuringSchedulingIgnoredDuringExecution []PreferredSchedulingTerm"
    ),
    "NodeSelector": "nodeSelectorTerms []NodeSelectorTerm",
    "NodeSelectorTerm": (
        "matchExpressions []NodeSelectorRequirement; matchFields []NodeSelectorRequirement"
    ),
    "NodeSelectorRequirement": "key 0; operator 0; values []",
    "PreferredSchedulingTerm": "weight 0; preference NodeSelectorTerm",
    "PodAffinity": (
        "requiredDuringSchedulingIgnoredDuringExecution []PodAffinityTerm; "
        "preferredDuringSchedulingIgnoredDuringExecution []WeightedPodAffinityTerm"
    ),
    "PodAffinityTerm": "namespaces []; topologyKey 0; matchLabelKeys []; mismatchLabelKeys []",
    "WeightedPodAffinityTerm": "weight 0; podAffinityTerm PodAffinityTerm",
    "Toleration": "key 0; operator 0; value 0; effect 0",
    "HostAlias": "ip 0; hostnames []",
    "PodDNSConfig": "nameservers []; searches []; options []PodDNSConfigOption",
    "PodDNSConfigOption": "name 0",
    "PodReadinessGate": "conditionType 0",
    "TopologySpreadConstraint": (
        "maxSkew 0; topologyKey 0; whenUnsatisfiable 0; matchLabelKeys []"
    ),
    "PodOS": "name 0",
    "PodSchedulingGate": "name 0",
    "PodResourceClaim": "name 0",
    "EvictionResponder": "name 0",
}
# (types.go: an EphemeralContainer is a Container with a target; PodAntiAffinity has
# PodAffinity's fields)
TYPES["EphemeralContainer"] = TYPES["Container"] + "; targetContainerName 0"
TYPES["PodAntiAffinity"] = TYPES["PodAffinity"]


@cache
def fields(type_name: str) -> dict[str, str]:
    """A struct's listed fields: name -> type code (empty: a type not in the table)."""
    row = TYPES.get(type_name, "")
    return dict(part.split(" ", 1) for part in row.split("; ") if part)


def _zero(value: Any) -> bool:
    return value is None or (not isinstance(value, list | dict) and value in ("", 0, False))


def stored(value: Any, code: str = ROOT) -> tuple[bool, Any]:
    """(whether the API server stores it at all, the value as stored) for ``value``
    written at a field of type ``code`` (see ``TYPES``; a struct's name for a struct):
    its zero-valued fields left out, recursively."""
    if isinstance(value, list):
        if not value:
            return False, None  # any Go slice: empty is absent
        item = code[2:] if code.startswith("[]") else ""
        return True, [stored(v, item)[1] if item else v for v in value]
    if code == "0":
        return not _zero(value), value
    if code == "{}":
        return value != {}, value
    name = code.lstrip("*")
    if not isinstance(value, dict) or name not in TYPES:
        return True, value
    known = fields(name)
    out: dict[str, Any] = {}
    for k, v in value.items():
        keep, v = stored(v, known[k]) if k in known else (v != [], v)
        if keep:
            out[k] = v
    return (bool(out) or code.startswith("*")), out
