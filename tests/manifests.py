"""Hypothesis strategies: random manifest streams as a model, and a renderer that writes
the model in varied but valid YAML styles. The model knows which workload uses which
key of which object, so tests can predict which checksums a change must move."""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import yaml
from hypothesis import strategies as st

from cmhash.parse.k8syaml import resolves_to_non_string

NAMES = ("alpha", "beta")
NAMESPACES = (None, "ns1")
KEYS = ("k1", "k2", "k3.conf")
WORKLOADS = {  # kind -> (apiVersion, path to the pod template spec)
    "Deployment": ("apps/v1", ("spec", "template")),
    "StatefulSet": ("apps/v1", ("spec", "template")),
    "DaemonSet": ("apps/v1", ("spec", "template")),
    "ReplicaSet": ("apps/v1", ("spec", "template")),
    "Job": ("batch/v1", ("spec", "template")),
    "CronJob": ("batch/v1", ("spec", "jobTemplate", "spec", "template")),
    "Pod": ("v1", ()),
}

value_text = st.one_of(
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-", min_size=0, max_size=12).map(
        lambda s: "v" + s
    ),
    # plain scalars Kubernetes reads as strings though YAML 1.1 would not (base-60), and
    # ones it reads as booleans or numbers (which the renderer must quote)
    st.sampled_from(
        [
            "03:00",
            "16:9",
            "1:30",
            "12:30:45",
            "2024-01-01",
            "yes",
            "on",
            "Off",
            "8080",
            "1e3",
            "0x1F",
            "~",
        ]
    ),
)
# a value written as a double-quoted scalar over two lines, the second one starting with
# '%' at column 0: the splitter must not take it for a directive
percent_text = value_text.map(lambda s: PercentFolded(f"head %{s}"))
OPTIONAL_TRUE = ("true", "yes", "on", "True", "Y", "ON")
DECLARE = {"ConfigMap": "cmhash.io/extra-configmaps", "Secret": "cmhash.io/extra-secrets"}


class PercentFolded(str):
    """A value ``a %b`` written ``"a\n%b"``: the line break folds into a space."""


class Plain(str):
    """Written as is, unquoted (e.g. a YAML 1.1 boolean spelling for ``optional``)."""


class Anchored(dict):  # type: ignore[type-arg]
    """A mapping written with an anchor ``&name`` (flow style)."""

    def __init__(self, name: str, items: dict[str, str]) -> None:
        super().__init__(items)
        self.anchor = name


class Alias(str):
    """Written as ``*name``."""


@dataclass
class Config:
    kind: str  # ConfigMap | Secret
    name: str
    namespace: str | None
    data: dict[str, str]  # decoded values
    string_data: dict[str, str] = field(default_factory=dict)  # Secrets only
    binary: dict[str, bytes] = field(default_factory=dict)  # ConfigMaps only
    labels: dict[str, str] = field(default_factory=dict)

    def content(self) -> dict[str, bytes]:
        out = {k: _folded(v).encode() for k, v in self.data.items()}
        out.update({k: v.encode() for k, v in self.string_data.items()})
        out.update(self.binary)
        return out


@dataclass
class Ref:
    site: str  # env | envFrom | volume | projected
    target: str  # ConfigMap | Secret
    name: str
    keys: tuple[str, ...] | None  # None: the whole object
    optional: bool
    spelling: str = "true"  # how optional: true is written (go-yaml booleans)


@dataclass
class Workload:
    kind: str
    name: str
    namespace: str | None
    refs: list[Ref]
    generated: bool = False  # named by metadata.generateName only
    opted_in: bool = False  # cmhash.io/enabled: "true"

    @property
    def annotated(self) -> bool:
        """Whether cmhash may annotate it (when it uses in-stream config)."""
        return not self.generated or self.opted_in

    @property
    def label(self) -> str:
        return self.name + "*" if self.generated else self.name

    def uses(self, cfg: Config, key: str, default_ns: str | None = None) -> bool:
        if (self.namespace or default_ns or "") != (cfg.namespace or default_ns or ""):
            return False
        return any(
            r.target == cfg.kind and r.name == cfg.name and (r.keys is None or key in r.keys)
            for r in self.refs
        )


@dataclass
class Stream:
    configs: list[Config]
    workloads: list[Workload]
    listed: list[int]  # indexes of documents wrapped, together, in one v1 List

    def documents(self) -> list[Config | Workload]:
        return [*self.configs, *self.workloads]

    def default_namespace(self, style: Style) -> str | None:
        """Where objects without a namespace land: with ``# Source:`` comments the stream
        is Helm output, and the one namespace all others name is the release namespace."""
        if not style.comments:
            return None
        named = {d.namespace for d in self.documents() if d.namespace}
        return named.pop() if len(named) == 1 else None

    def unique_under(self, style: Style) -> bool:
        """No two objects become one once namespace-less ones land in the release
        namespace (the generator only keeps objects unique as written)."""
        ns = self.default_namespace(style)
        configs = {(c.kind, c.name, c.namespace or ns) for c in self.configs}
        workloads = {(w.kind, w.label, w.namespace or ns) for w in self.workloads}
        return len(configs) == len(self.configs) and len(workloads) == len(self.workloads)


@st.composite
def configs(draw: Any) -> Config:
    kind = draw(st.sampled_from(["ConfigMap", "Secret"]))
    keys = draw(st.lists(st.sampled_from(KEYS), unique=True, max_size=3))
    data = {k: draw(value_text) for k in keys}
    if kind == "ConfigMap" and keys and draw(st.integers(0, 4)) == 0:
        data[keys[0]] = draw(percent_text)
    cfg = Config(kind, draw(st.sampled_from(NAMES)), draw(st.sampled_from(NAMESPACES)), data)
    extra = [k for k in ("x1", "x2") if draw(st.booleans())]
    if kind == "Secret":
        cfg.string_data = {k: draw(value_text) for k in extra}
    else:
        cfg.binary = {k: draw(st.binary(min_size=1, max_size=6)) for k in extra}
    if draw(st.booleans()):
        cfg.labels = {"app": draw(value_text)}
    return cfg


@st.composite
def refs(draw: Any) -> Ref:
    site = draw(st.sampled_from(["env", "envFrom", "volume", "projected", "declared"]))
    target = draw(st.sampled_from(["ConfigMap", "Secret"]))
    keys: tuple[str, ...] | None
    if site == "env":
        keys = (draw(st.sampled_from(KEYS)),)
    elif site in ("envFrom", "declared"):  # declared: like a whole-object reference
        keys = None
    else:
        listed = draw(st.lists(st.sampled_from(KEYS), unique=True, max_size=2))
        keys = tuple(listed) or None
    optional = draw(st.booleans()) and site != "declared"
    spelling = draw(st.sampled_from(OPTIONAL_TRUE)) if optional else "true"
    return Ref(site, target, draw(st.sampled_from(NAMES)), keys, optional, spelling)


@st.composite
def workloads(draw: Any) -> Workload:
    generated = draw(st.integers(0, 5)) == 0
    return Workload(
        draw(st.sampled_from(sorted(WORKLOADS))),
        draw(st.sampled_from(NAMES)),
        draw(st.sampled_from(NAMESPACES)),
        draw(st.lists(refs(), min_size=1, max_size=4)),
        generated,
        generated and draw(st.booleans()),
    )


def _unique(items: list[Any], key: Any) -> list[Any]:
    seen, out = set(), []
    for item in items:
        k = key(item)
        if k not in seen:
            seen.add(k)
            out.append(item)
    return out


@st.composite
def streams(draw: Any) -> Stream:
    cfgs = _unique(
        draw(st.lists(configs(), min_size=1, max_size=5)), lambda c: (c.kind, c.name, c.namespace)
    )
    wls = _unique(
        draw(st.lists(workloads(), min_size=1, max_size=4)),
        lambda w: (w.kind, w.label, w.namespace),
    )
    n = len(cfgs) + len(wls)
    listed = sorted(draw(st.sets(st.integers(0, n - 1), max_size=3)))
    return Stream(cfgs, wls, listed if len(listed) >= 1 else [])


# ------------------------------------------------------------------ model -> objects


def config_object(cfg: Config, *, b64_wrap: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": cfg.name}
    if cfg.namespace:
        meta["namespace"] = cfg.namespace
    if cfg.labels:
        meta["labels"] = dict(cfg.labels)
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": cfg.kind, "metadata": meta}
    if cfg.kind == "Secret":
        if cfg.data:
            obj["data"] = {k: _b64(v.encode(), b64_wrap) for k, v in cfg.data.items()}
        if cfg.string_data:
            obj["stringData"] = dict(cfg.string_data)
    else:
        if cfg.data:
            obj["data"] = dict(cfg.data)
        if cfg.binary:
            obj["binaryData"] = {k: _b64(v, b64_wrap) for k, v in cfg.binary.items()}
    return obj


class Wrapped(str):
    """A base64 value to write as a literal block, one line per 8 characters."""


def _b64(data: bytes, wrap: bool) -> str:
    text = base64.b64encode(data).decode()
    return Wrapped(text) if wrap and len(text) > 8 else text


def _folded(value: str) -> str:
    return str(value)


def workload_object(w: Workload, *, anchors: bool = False) -> dict[str, Any]:
    api, path = WORKLOADS[w.kind]
    container: dict[str, Any] = {"name": "main", "image": "example/app:1"}
    pod: dict[str, Any] = {"containers": [container]}
    volumes: list[Any] = []
    declared: dict[str, list[str]] = {}
    for i, r in enumerate(w.refs):
        opt = {"optional": Plain(r.spelling)} if r.optional else {}
        if r.site == "declared":
            declared.setdefault(DECLARE[r.target], []).append(r.name)
        elif r.site == "env":
            sel = "configMapKeyRef" if r.target == "ConfigMap" else "secretKeyRef"
            container.setdefault("env", []).append(
                {"name": f"E{i}", "valueFrom": {sel: {"name": r.name, "key": r.keys[0], **opt}}}
                if r.keys
                else {}
            )
        elif r.site == "envFrom":
            sel = "configMapRef" if r.target == "ConfigMap" else "secretRef"
            container.setdefault("envFrom", []).append({sel: {"name": r.name, **opt}})
        else:
            name_field = "name" if r.target == "ConfigMap" else "secretName"
            src: dict[str, Any] = {name_field: r.name, **opt}
            if r.keys:
                src["items"] = [{"key": k, "path": f"p{j}"} for j, k in enumerate(r.keys)]
            vol_key = "configMap" if r.target == "ConfigMap" else "secret"
            if r.site == "volume":
                volumes.append({"name": f"v{i}", vol_key: src})
            else:
                src = {("name" if k == name_field else k): v for k, v in src.items()}
                volumes.append({"name": f"v{i}", "projected": {"sources": [{vol_key: src}]}})
    if volumes:
        pod["volumes"] = volumes
    meta: dict[str, Any] = {"generateName" if w.generated else "name": w.name}
    if w.namespace:
        meta["namespace"] = w.namespace
    annotations = {key: ", ".join(names) for key, names in declared.items()}
    if w.opted_in:
        annotations["cmhash.io/enabled"] = "true"
    if annotations:
        meta["annotations"] = annotations
    obj: dict[str, Any] = {"apiVersion": api, "kind": w.kind, "metadata": meta}
    if not path:
        obj["spec"] = pod
        return obj
    template: dict[str, Any] = {"spec": pod}
    anchor = f"l{abs(hash((w.kind, w.label, w.namespace))) % 10**6}"
    if anchors:  # labels anchored in the template, repeated by an alias after it
        template = {"metadata": {"labels": Anchored(anchor, {"app": w.name})}, "spec": pod}
    node = obj
    for step in path[:-1]:
        node = node.setdefault(step, {})
    node[path[-1]] = template
    if anchors:
        node["selector"] = {"matchLabels": Alias(anchor)}
    return obj


# ------------------------------------------------------------------ rendering


@dataclass(frozen=True)
class Style:
    indent: int = 2
    indentless: bool = True
    quote: str = ""  # "", "'" or '"' for string values
    flow_refs: bool = False  # reference mappings written {name: x, key: y}
    comments: bool = False
    blank_lines: bool = False
    crlf: bool = False
    start_marker: bool = True
    end_markers: bool = False
    final_newline: bool = True
    anchors: bool = False  # template labels anchored, aliased by the selector


styles = st.builds(
    Style,
    indent=st.sampled_from([2, 4]),
    indentless=st.booleans(),
    quote=st.sampled_from(["", "'", '"']),
    flow_refs=st.booleans(),
    comments=st.booleans(),
    blank_lines=st.booleans(),
    crlf=st.booleans(),
    start_marker=st.booleans(),
    end_markers=st.booleans(),
    final_newline=st.booleans(),
    anchors=st.booleans(),
)

FLOW_KEYS = {"configMapKeyRef", "secretKeyRef", "configMapRef", "secretRef"}
NL = "\x00NL\x00"  # a line break inside a scalar, made the stream's newline at the end


def _scalar(value: Any, style: Style, nl: str = "\n") -> str:
    text = str(value)
    if text == "true" or isinstance(value, Plain):
        return text
    if isinstance(value, Alias):
        return f"*{text}"
    if isinstance(value, PercentFolded):
        head, _, rest = text.partition(" %")
        return f'"{head}{nl}%{rest}"'
    if not style.quote:
        # plain, unless Kubernetes would read it as a number, bool or null (base64 can be
        # "1234"); base-60 forms such as 03:00 stay plain: Kubernetes reads them as strings
        return f'"{text}"' if resolves_to_non_string(text) else text
    if style.quote == "'":
        return "'" + text.replace("'", "''") + "'"
    return '"' + text + '"'


def _flow(obj: dict[str, Any], style: Style) -> str:
    anchor = f"&{obj.anchor} " if isinstance(obj, Anchored) else ""
    return anchor + "{" + ", ".join(f"{k}: {_scalar(v, style)}" for k, v in obj.items()) + "}"


def _emit(obj: Any, indent: int, style: Style, out: list[str], first_prefix: str = "") -> None:
    """Block style. ``first_prefix`` is written before the first line (a "- ")."""
    pad = " " * indent
    if isinstance(obj, dict):
        for n, (k, v) in enumerate(obj.items()):
            lead = first_prefix if n == 0 and first_prefix else pad
            if style.comments and n == 1:
                out.append(f"{pad}# about {k}")
            if isinstance(v, Wrapped):
                out.append(f"{lead}{k}: |")
                out.extend(f"{pad}{' ' * style.indent}{v[i : i + 8]}" for i in range(0, len(v), 8))
            elif (
                isinstance(v, dict)
                and v
                and ((k in FLOW_KEYS and style.flow_refs) or isinstance(v, Anchored))
            ):
                out.append(f"{lead}{k}: {_flow(v, style)}")
            elif isinstance(v, dict) and v:
                out.append(f"{lead}{k}:")
                _emit(v, indent + style.indent, style, out)
            elif isinstance(v, list) and v:
                out.append(f"{lead}{k}:")
                _emit(v, indent if style.indentless else indent + style.indent, style, out)
            elif isinstance(v, (dict, list)):
                out.append(f"{lead}{k}: {'{}' if isinstance(v, dict) else '[]'}")
            else:
                comment = "  # inline" if style.comments and k == "name" else ""
                out.append(f"{lead}{k}: {_scalar(v, style, NL)}{comment}")
    else:
        for item in obj:
            if isinstance(item, dict) and item:
                _emit(item, indent + 2, style, out, first_prefix=pad + "- ")
            else:
                out.append(f"{pad}- {_scalar(item, style) if not isinstance(item, dict) else '{}'}")


def render_document(obj: dict[str, Any], style: Style) -> list[str]:
    out: list[str] = []
    if style.comments:
        out.append(f"# Source: chart/templates/{obj['kind'].lower()}.yaml")
    _emit(obj, 0, style, out)
    if style.blank_lines:
        out.insert(len(out) // 2, "")
    return out


def helm_rank(kind: str) -> tuple[int, str]:
    """Where ``helm template`` prints a kind (helm pkg/release/v1/util/kind_sorter.go
    InstallOrder, unknown kinds last by name): the ``# Source:`` style is Helm output,
    and the order of a stream of several renders is what tells them apart
    (plan/renders.py)."""
    from cmhash.knowledge.helm import INSTALL_ORDER

    return (INSTALL_ORDER.index(kind), "") if kind in INSTALL_ORDER else (len(INSTALL_ORDER), kind)


def render(
    stream: Stream, style: Style, *, order: list[int] | None = None, b64_wrap: bool = False
) -> bytes:
    docs = stream.documents()
    objects = [
        config_object(d, b64_wrap=b64_wrap)
        if isinstance(d, Config)
        else workload_object(d, anchors=style.anchors)
        for d in docs
    ]
    listed = [objects[i] for i in stream.listed]
    singles = [o for i, o in enumerate(objects) if i not in stream.listed]
    units = singles + ([{"apiVersion": "v1", "kind": "List", "items": listed}] if listed else [])
    if order is not None:
        units = [units[i] for i in order if i < len(units)]
    if style.comments:  # Helm output: Helm prints a release's objects in its kind order
        units.sort(key=lambda u: helm_rank(str(u.get("kind"))))
    lines: list[str] = []
    for n, unit in enumerate(units):
        if n > 0 or style.start_marker:
            lines.append("---")
        lines.extend(render_document(unit, style))
        if style.end_markers:
            lines.append("...")
    nl = "\r\n" if style.crlf else "\n"
    text = nl.join(lines) + (nl if style.final_newline else "")
    return text.replace(NL, nl).encode()


def with_config(stream: Stream, index: int, cfg: Config) -> Stream:
    cfgs = list(stream.configs)
    cfgs[index] = cfg
    return replace(stream, configs=cfgs)


def load_objects(data: bytes | str) -> list[dict[str, Any]]:
    """The objects of a stream as plain data (what kubectl would apply): the items of
    ``List`` kinds unwrapped, empty documents dropped."""
    text = data.decode() if isinstance(data, bytes) else data
    out: list[dict[str, Any]] = []
    for doc in yaml.load_all(text.replace("\r\n", "\n"), Loader=yaml.CSafeLoader):
        if isinstance(doc, dict) and str(doc.get("kind", "")).endswith("List") and "items" in doc:
            out.extend(doc["items"] or [])
        elif isinstance(doc, dict):
            out.append(doc)
    return out


def big_stream(count: int, value: str = "v") -> bytes:
    """``count`` small ConfigMaps: an input over the size where big-input notes apply."""
    return b"---\n".join(
        f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{i}\ndata:\n  k: {value}\n".encode()
        for i in range(count)
    )


def stops_on_a_signal(call: Callable[[], object]) -> tuple[float, float]:
    """Run ``call`` once to time it, then again with SIGUSR1 sent from another process a
    tenth of the way in, its handler raising: (seconds the second run went on, seconds
    of a full run). The second run must raise the handler's exception (a C loop that
    never runs Python's signal handlers would not). No cyclic GC meanwhile, as in a
    cmhash run: a gc callback would run the handler inside itself, where its exception
    is swallowed."""
    import gc
    import os
    import signal
    import subprocess
    import time

    class Stop(Exception):
        pass

    def handler(signum: int, frame: object) -> None:
        raise Stop

    collecting = gc.isenabled()
    gc.disable()
    previous = signal.signal(signal.SIGUSR1, handler)
    try:
        start = time.perf_counter()
        call()
        full = time.perf_counter() - start
        # from another process: a thread of this one would wait for the GIL the call holds
        kill = ["sh", "-c", f"sleep {full / 10:.3f}; kill -USR1 {os.getpid()}"]
        start = time.perf_counter()
        sender = subprocess.Popen(kill)
        try:
            call()
        except Stop:
            pass
        else:
            raise AssertionError("the signal handler's exception did not stop the call")
        finally:
            sender.wait()
        return time.perf_counter() - start, full
    finally:
        signal.signal(signal.SIGUSR1, previous)
        if collecting:
            gc.enable()
