"""``{name, key}`` selectors outside pod specs: fields that name a ConfigMap or Secret and
one of its keys, read by name by whatever reconciles the object (an operator, a
controller), never through a pod. ``--versioned`` must keep such an object's name
(plan/selectors.py finds them; plan/byname.py says why).

**The shape** (``SELECTOR_KEYS``): a mapping with a string ``name`` and a string ``key``
and nothing else but ``optional`` and ``namespace`` (k8s.io/api core/v1 types.go
``SecretKeySelector``, ``ConfigMapKeySelector``: ``LocalObjectReference`` inlined,
``Key``, ``Optional``; the prometheus-operator's v1beta1 ``SecretKeySelector``, name and
key only; external-secrets' ``SecretKeySelector``, which may name another namespace). A
``SecretOrConfigMap`` (prometheus-operator v1 types.go) holds one under ``secret`` or
``configMap``, which says its kind; elsewhere the field's name may (``clientSecret``,
``configMapKeyRef``), or else both kinds are candidates.

**Certain** where a schema says so: a CRD in the input whose ``openAPIV3Schema`` has an
object with string ``name`` and ``key`` properties and ``key`` required at a path
(plan/selectors.py ``schema_selectors``), or a row of ``PROMETHEUS_OPERATOR`` below:
each kind's selector fields, built from the operator's Go types (prometheus-operator at
``6adcebc5076c``, pkg/apis/monitoring/v1, v1alpha1, v1beta1; each block cites its type),
and checked against the published CRDs (tests/crds, tests/plan/test_selectors.py: the
table's paths are exactly those the schemas describe).

Paths: ``*`` is each item of a list, ``{}`` each value of a mapping (``proxyConnectHeader``:
``map[string][]SecretKeySelector``).
"""

# No "from __future__ import annotations": typing compiles string NamedTuple fields at import

from typing import NamedTuple

# the shape's keys; ``namespace``: the object's namespace, where the selector may name
# one in another (external-secrets apis/meta/v1 SecretKeySelector: name, namespace, key)
SELECTOR_KEYS = frozenset(("name", "key", "optional", "namespace"))
REQUIRED_KEYS = ("name", "key")
ARMS = {"secret": "Secret", "configMap": "ConfigMap"}  # a SecretOrConfigMap's two arms
EITHER = "either"  # a SecretOrConfigMap: its arm says which


class Leaf(NamedTuple):
    """One selector field: its path (from the block, or the resource), the kind it names
    (Secret, ConfigMap, or EITHER for a SecretOrConfigMap) and its Go field."""

    path: tuple[str, ...]
    target: str
    go: str


def _under(prefix: tuple[str, ...], *blocks: tuple[Leaf, ...]) -> tuple[Leaf, ...]:
    return tuple(leaf._replace(path=(*prefix, *leaf.path)) for block in blocks for leaf in block)


def _secrets(prefix: tuple[str, ...], go: str, *fields: str) -> tuple[Leaf, ...]:
    return tuple(Leaf((*prefix, f), "Secret", f"{go}.{f[0].upper()}{f[1:]}") for f in fields)


# -- building blocks: v1/types.go, v1/http_config.go, v1/tls_types.go, v1/prometheus_types.go
BASIC_AUTH = _secrets(("basicAuth",), "BasicAuth", "username", "password")  # types.go:746,751
SAFE_AUTHORIZATION = (
    Leaf(("authorization", "credentials"), "Secret", "SafeAuthorization.Credentials"),
)
SAFE_TLS = (  # tls_types.go:120,124,128 SafeTLSConfig
    Leaf(("tlsConfig", "ca"), EITHER, "SafeTLSConfig.CA"),
    Leaf(("tlsConfig", "cert"), EITHER, "SafeTLSConfig.Cert"),
    Leaf(("tlsConfig", "keySecret"), "Secret", "SafeTLSConfig.KeySecret"),
)
PROXY = (Leaf(("proxyConnectHeader", "{}", "*"), "Secret", "ProxyConfig.ProxyConnectHeader"),)
OAUTH2 = (  # types.go:674,679 OAuth2 (its tlsConfig and proxy fields inlined)
    Leaf(("oauth2", "clientId"), EITHER, "OAuth2.ClientID"),
    Leaf(("oauth2", "clientSecret"), "Secret", "OAuth2.ClientSecret"),
    *_under(("oauth2",), SAFE_TLS, PROXY),
)
BEARER = (Leaf(("bearerTokenSecret",), "Secret", "HTTPConfigWithoutTLS.BearerTokenSecret"),)
SIGV4 = _secrets(("sigv4",), "Sigv4", "accessKey", "secretKey")  # prometheus_types.go:1975
AZURE = (Leaf(("azureAd", "oauth", "clientSecret"), "Secret", "AzureOAuth.ClientSecret"),)
WEB_TLS = (  # types.go:411,428,445 WebTLSConfig (client_ca: its JSON name)
    Leaf(("tlsConfig", "cert"), EITHER, "WebTLSConfig.Cert"),
    Leaf(("tlsConfig", "client_ca"), EITHER, "WebTLSConfig.ClientCA"),
    Leaf(("tlsConfig", "keySecret"), "Secret", "WebTLSConfig.KeySecret"),
)
# the same fields where the TLS block is the field itself (grpcServerTlsConfig, clusterTLS)
TLS_FIELDS = tuple(leaf._replace(path=leaf.path[1:]) for leaf in SAFE_TLS)
WEB_TLS_FIELDS = tuple(leaf._replace(path=leaf.path[1:]) for leaf in WEB_TLS)
HTTP = (*BASIC_AUTH, *SAFE_AUTHORIZATION, *OAUTH2, *SAFE_TLS, *PROXY)  # HTTPConfig
REMOTE_WRITE = (*HTTP, *SIGV4, *AZURE)  # RemoteWriteSpec

# -- ScrapeConfig (v1alpha1/scrapeconfig_types.go): each service discovery's blocks
_SD_HTTP = (
    *("azure", "consul", "docker", "dockerSwarm", "eureka", "hetzner", "http"),
    *("kubernetes", "kuma", "lightSail", "nomad", "puppetDB"),
)
_SD_NO_BASIC = ("digitalOcean", "ionos", "linode")
SCRAPE_CONFIG = (
    *HTTP,
    *(leaf for sd in _SD_HTTP for leaf in _under((f"{sd}SDConfigs", "*"), HTTP)),
    *(
        leaf
        for sd in _SD_NO_BASIC
        for leaf in _under((f"{sd}SDConfigs", "*"), SAFE_AUTHORIZATION, OAUTH2, SAFE_TLS, PROXY)
    ),
    *_under(("azureSDConfigs", "*"), _secrets((), "AzureSDConfig", "clientSecret")),
    *_under(("consulSDConfigs", "*"), _secrets((), "ConsulSDConfig", "tokenRef")),
    *_under(
        ("ec2SDConfigs", "*"),
        SAFE_TLS,
        PROXY,
        _secrets((), "EC2SDConfig", "accessKey", "secretKey"),
    ),
    *_under(
        ("lightSailSDConfigs", "*"), _secrets((), "LightSailSDConfig", "accessKey", "secretKey")
    ),
    *_under(
        ("openstackSDConfigs", "*"),
        SAFE_TLS,
        _secrets((), "OpenStackSDConfig", "password", "applicationCredentialSecret"),
    ),
    *_under(
        ("ovhcloudSDConfigs", "*"),
        _secrets((), "OVHCloudSDConfig", "applicationSecret", "consumerKey"),
    ),
    *_under(
        ("scalewaySDConfigs", "*"), SAFE_TLS, PROXY, _secrets((), "ScalewaySDConfig", "secretKey")
    ),
)

# -- AlertmanagerConfig (v1alpha1 and v1beta1 alertmanager_config_types.go): each
# receiver's httpConfig, and its own secret fields
_RECEIVERS = (
    *("discord", "msteams", "msteamsv2", "opsgenie", "pagerduty", "pushover", "rocketchat"),
    *("slack", "sns", "telegram", "victorops", "webex", "webhook", "wechat"),
)
_RECEIVER_SECRETS = {
    "discord": ("apiURL",),
    "email": ("authPassword", "authSecret"),
    "msteams": ("webhookUrl",),
    "msteamsv2": ("webhookURL",),
    "opsgenie": ("apiKey",),
    "pagerduty": ("routingKey", "serviceKey"),
    "pushover": ("token", "userKey"),
    "rocketchat": ("token", "tokenID"),
    "slack": ("apiURL",),
    "telegram": ("botToken",),
    "victorops": ("apiKey",),
    "webhook": ("urlSecret",),
    "wechat": ("apiSecret",),
}
ALERTMANAGER_CONFIG = (
    *(
        leaf
        for r in _RECEIVERS
        for leaf in _under(("receivers", "*", f"{r}Configs", "*", "httpConfig"), HTTP, BEARER)
    ),
    *_under(("receivers", "*", "emailConfigs", "*"), SAFE_TLS),
    *_under(("receivers", "*", "snsConfigs", "*"), SIGV4),
    *(
        leaf
        for r, fields in _RECEIVER_SECRETS.items()
        for leaf in _secrets(
            ("receivers", "*", f"{r}Configs", "*"), f"{r.capitalize()}Config", *fields
        )
    ),
)

# -- the workloads' resources (v1/prometheus_types.go, alertmanager_types.go,
# thanos_types.go): their own pod-spec fields are pod specs, read as such
_ADDITIONAL = (
    "additionalScrapeConfigs",
    "additionalAlertRelabelConfigs",
    "additionalAlertManagerConfigs",
)
PROMETHEUS = (
    *_secrets((), "CommonPrometheusFields", *_ADDITIONAL),
    *_under(
        ("alerting", "alertmanagers", "*"), BASIC_AUTH, SAFE_AUTHORIZATION, SAFE_TLS, PROXY, SIGV4
    ),
    *_under(("apiserverConfig",), BASIC_AUTH, SAFE_AUTHORIZATION, SAFE_TLS, PROXY),
    *_under(("remoteRead", "*"), HTTP),
    *_under(("remoteWrite", "*"), REMOTE_WRITE),
    *_under(("scrapeClasses", "*"), SAFE_AUTHORIZATION, SAFE_TLS),
    *_under(("tracingConfig",), SAFE_TLS),
    *_under(("thanos", "grpcServerTlsConfig"), TLS_FIELDS),
    *_secrets(("thanos",), "ThanosSpec", "objectStorageConfig", "tracingConfig"),
    *_under(("web",), WEB_TLS),
)
PROMETHEUS_AGENT = (
    *_secrets((), "CommonPrometheusFields", "additionalScrapeConfigs"),
    *_under(("apiserverConfig",), BASIC_AUTH, SAFE_AUTHORIZATION, SAFE_TLS, PROXY),
    *_under(("remoteWrite", "*"), REMOTE_WRITE),
    *_under(("scrapeClasses", "*"), SAFE_AUTHORIZATION, SAFE_TLS),
    *_under(("tracingConfig",), SAFE_TLS),
    *_under(("web",), WEB_TLS),
)
_GLOBAL = ("alertmanagerConfiguration", "global")
ALERTMANAGER = (
    *_under((*_GLOBAL, "httpConfig"), HTTP, BEARER),
    *_secrets(
        _GLOBAL, "AlertmanagerGlobalConfig", "slackApiUrl", "opsGenieApiUrl", "opsGenieApiKey"
    ),
    *_secrets((*_GLOBAL, "smtp"), "GlobalSMTPConfig", "authPassword", "authSecret"),
    *_under((*_GLOBAL, "smtp"), SAFE_TLS),
    *_secrets((*_GLOBAL, "rocketChat"), "GlobalRocketChatConfig", "token", "tokenID"),
    *_secrets((*_GLOBAL, "wechat"), "GlobalWeChatConfig", "apiSecret"),
    *_secrets((*_GLOBAL, "victorops"), "GlobalVictorOpsConfig", "apiKey"),
    *_secrets((*_GLOBAL, "mattermost"), "GlobalMattermostConfig", "webhookURL"),
    Leaf(
        ("alertmanagerConfiguration", "templates", "*"),
        EITHER,
        "AlertmanagerConfiguration.Templates",
    ),
    *_under(("clusterTLS", "client"), TLS_FIELDS),
    *_under(("clusterTLS", "server"), WEB_TLS_FIELDS),
    *_under(("web",), WEB_TLS),
)
THANOS_RULER = (
    *_under(("remoteWrite", "*"), REMOTE_WRITE),
    *_secrets((), "ThanosRulerSpec", "objectStorageConfig", "queryConfig", "alertmanagersConfig"),
    *_secrets((), "ThanosRulerSpec", "alertRelabelConfigs", "tracingConfig"),
    *_under(("grpcServerTlsConfig",), TLS_FIELDS),
    *_under(("web",), WEB_TLS),
)

GROUP = "monitoring.coreos.com"
# kind -> its selector fields, from the resource's spec
PROMETHEUS_OPERATOR: dict[str, tuple[Leaf, ...]] = {
    "ServiceMonitor": _under(("endpoints", "*"), HTTP, BEARER),  # v1 Endpoint
    "PodMonitor": _under(("podMetricsEndpoints", "*"), HTTP, BEARER),  # v1 PodMetricsEndpoint
    "Probe": (
        *BASIC_AUTH,
        *SAFE_AUTHORIZATION,
        *OAUTH2,
        *SAFE_TLS,
        *BEARER,
        *_under(("prober",), PROXY),
    ),
    "ScrapeConfig": SCRAPE_CONFIG,
    "AlertmanagerConfig": ALERTMANAGER_CONFIG,
    "Prometheus": PROMETHEUS,
    "PrometheusAgent": PROMETHEUS_AGENT,
    "Alertmanager": ALERTMANAGER,
    "ThanosRuler": THANOS_RULER,
}


def known(group: str, kind: str) -> tuple[tuple[tuple[str, ...], str, str], ...]:
    """(path from the resource's root, kind named, Go field) of each selector the table
    knows for a kind; a SecretOrConfigMap as its two arms."""
    if group != GROUP:
        return ()
    out = []
    for leaf in PROMETHEUS_OPERATOR.get(kind, ()):
        path = ("spec", *leaf.path)
        if leaf.target == EITHER:
            out += [((*path, arm), target, leaf.go) for arm, target in ARMS.items()]
        else:
            out.append((path, leaf.target, leaf.go))
    return tuple(out)
