"""YAML as kubectl reads it: what kubectl sends for each tag (and for keys and merges),
and what cmhash hashes or refuses for it, on both parsers.

The table holds what kubectl 1.35 sends (``kubectl label --local -f FILE -o json``
decodes a file as ``kubectl apply`` does, without a cluster), and what cmhash does with
it: a string is what the pod sees, hashed as its UTF-8 bytes; a number or a boolean the
API server refuses in a ``map[string]string``, and so does cmhash (exit 2); where
kubectl refuses the file, cmhash refuses it at the same place (``file:line:col``, exit
2). Two differences are on purpose, each said where it is pinned. The table runs against
the real kubectl where it is installed (CI installs it: a missing one fails there).

Without the tags: ``!!binary aGVsbG8=`` was hashed as the text ``aGVsbG8=`` while the
pod sees ``hello``; an invalid one was hashed instead of refused; ``!!int 3`` passed
as the string "3"; ``! 3`` was refused as a number; ``!!str <<`` merged; the key ``yes``
was hashed as ``yes`` while the pod sees the key ``true``."""

from __future__ import annotations

import json
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from conftest import IN_CI, run_cmhash, tool
from test_k8syaml import TABLE as PLAIN

from cmhash.analyze.configs import config_content
from cmhash.parse.events import backend, parse_chunk
from cmhash.parse.resources import resources_of
from cmhash.read.source import SourceText

ERROR = "error"  # kubectl refuses the file
REFUSED = "refused"  # cmhash refuses it (exit 2)


class EitherOf(tuple):  # type: ignore[type-arg]
    """What kubectl sends is one of these, not always the same one."""


# A ConfigMap value ``k: VALUE`` -> what kubectl sends for it.
VALUES: list[tuple[str, Any]] = [
    # !!binary: base64 decoded (Go's StdEncoding), sent as a string; bytes that are no
    # UTF-8 become U+FFFD, one each
    ("!!binary aGVsbG8=", "hello"),
    ("!!binary |\n    aGVs\n    bG8g\n    d29y\n    bGQ=", "hello world"),  # breaks skipped
    ('!!binary "aGVs\\r\\nbG8="', "hello"),
    ("!<tag:yaml.org,2002:binary> aGVsbG8=", "hello"),
    ("!!binary 5pel5pys", "日本"),
    ("!!binary /w==", "\ufffd"),
    ("!!binary 4oI=", "\ufffd\ufffd"),  # a UTF-8 sequence cut short: one per byte
    ("!!binary 7aCA", "\ufffd\ufffd\ufffd"),  # a surrogate's encoding
    ("!!binary aGVsbG9=", "hello"),  # the last character's spare bits are not checked
    ('!!binary ""', ""),
    ("!!binary", ""),
    ("!!binary aGVsbG8", ERROR),  # padding required
    ("!!binary aGVsbG8==", ERROR),
    ("!!binary aGVsbG8=aGk=", ERROR),  # nothing after the padding
    ("!!binary aGV sbG8=", ERROR),  # a space
    ("!!binary >\n    aGVs\n    bG8=", ERROR),  # folded: the line break is a space
    ("!!binary a*b=", ERROR),
    # an escape beyond U+10FFFF names no character
    ('"\\U00110000"', ERROR),
    ('"\\UFFFFFFFF"', ERROR),
    # !!str and the non-specific tag: the text as written
    ("!!str 3", "3"),
    ("!!str ~", "~"),
    ("!!str true", "true"),
    ("!!str 0x1F", "0x1F"),
    ("!!str", ""),
    ("! 3", "3"),
    ("! ~", "~"),
    ("! yes", "yes"),
    # typed tags: the text must be of the type; then a number, a boolean or null
    ("!!int 3", 3),
    ('!!int "3"', 3),
    ("!!int 0x1F", 31),
    ("!!int 017", 15),
    ("!!int 1_000", 1000),
    ("!!int -0b101", -5),
    ("!!int abc", ERROR),
    ("!!int 1e3", ERROR),
    ("!!int 08", ERROR),
    ("!!int 0x1FFFFFFFFFFFFFFFFFF", ERROR),
    ("!!float 1.5", 1.5),
    ("!!float 3", 3),
    ("!!float 08", 8),
    ('!!float "1_000"', 1000),
    ("!!float abc", ERROR),
    ("!!float .nan", ERROR),  # (json.Marshal: unsupported value)
    ("!!bool yes", True),
    ('!!bool "on"', True),
    ("!!bool 1", ERROR),
    ("!!null ~", None),
    ('!!null ""', None),
    ("!!null", None),
    ("!!null abc", ERROR),
    # !!timestamp: Go's time.Parse with go-yaml's four layouts; the text as written
    ("!!timestamp 2001-12-14", "2001-12-14"),
    ("!!timestamp 2001-1-2", "2001-1-2"),
    ("!!timestamp 2001-12-14t21:59:43.10-05:00", "2001-12-14t21:59:43.10-05:00"),
    ("!!timestamp 2001-12-14T1:2:3Z", "2001-12-14T1:2:3Z"),
    ("!!timestamp 2001-12-14 21:59:43.10", "2001-12-14 21:59:43.10"),
    ("!!timestamp 2001-12-14  21:59:43", "2001-12-14  21:59:43"),
    ("!!timestamp 2001-12-14T21:59:43.1234567891Z", "2001-12-14T21:59:43.1234567891Z"),
    ("!!timestamp 2000-02-29", "2000-02-29"),
    ('!!timestamp "2001-12-14"', "2001-12-14"),
    ("!!timestamp 2001-02-29", ERROR),
    ("!!timestamp 2001-13-14", ERROR),
    ("!!timestamp 2001-12-14T24:00:00Z", ERROR),
    ("!!timestamp 2001-12-14T21:59:60Z", ERROR),
    ("!!timestamp 2001-12-14T21:59:43+05", ERROR),
    ("!!timestamp 2001-12-14T21:59:43-0500", ERROR),
    ("!!timestamp 2001-12-14T21:59:43.10", ERROR),
    ("!!timestamp 2001-12-14T21:59:43.Z", ERROR),
    ("!!timestamp 01-12-14", ERROR),
    ("!!timestamp abc", ERROR),
    ("!!timestamp 3", ERROR),
    # tags go-yaml does not resolve on a scalar: the text
    ("!!seq x", "x"),
    ("!!map x", "x"),
    ("!!merge x", "x"),
]

# Where cmhash does not follow kubectl, on purpose: VALUE -> (kubectl, why).
DIFFERENT = {
    # a custom tag (!vault, !Ref...) is kept as the text by kubectl: most likely a value
    # a tool was meant to fill in; cmhash refuses it (unknown-tag-on-value)
    "!foo bar": ("bar", "an unknown tag: an unrendered placeholder?"),
    "!<tag:example.com,2000:x> bar": ("bar", "an unknown tag: an unrendered placeholder?"),
}

H = "apiVersion: v1\nkind: {kind}\nmetadata:\n  name: c\n"


def value_doc(value: str) -> str:
    if value == "-":  # (a block sequence's entry there: in flow, the scalar)
        return H.format(kind="ConfigMap") + f"data: {{k: {value}}}\n"
    return H.format(kind="ConfigMap") + f"data:\n  k: {value}\n"


# Whole documents: (id, text, kind, field) -> kubectl's field as JSON, or ERROR.
DOCS: list[tuple[str, str, str, Any]] = [
    (
        "keys",
        H.format(kind="ConfigMap") + "data:\n"
        "  yes: a\n  0x1F: b\n  1.50: c\n  017: d\n  !!binary a2V5: e\n  !!int 4: f\n"
        "  !!str 5: g\n  2001-12-14: h\n  1e3: i\n  .5: j\n  1_000_000: l\n  Off: m\n"
        "  nginx.conf: nn\n  !!float 2: o\n  1234567.0: p\n",
        "data",
        {
            "true": "a",
            "31": "b",
            "1.5": "c",
            "15": "d",
            "key": "e",
            "4": "f",
            "5": "g",
            "2001-12-14": "h",
            "1000": "i",
            "0.5": "j",
            "1000000": "l",
            "false": "m",
            "nginx.conf": "nn",
            "2": "o",
            "1.234567e+06": "p",
        },
    ),
    ("null-key", H.format(kind="ConfigMap") + "data:\n  ~: v\n", "data", ERROR),
    (
        "merge",
        H.format(kind="ConfigMap") + "b: &b {p: '1', q: '2'}\ndata:\n  <<: *b\n  q: '3'\n",
        "data",
        {"p": "1", "q": "3"},
    ),
    (
        "merge-tagged",
        H.format(kind="ConfigMap") + "b: &b {p: '1'}\ndata:\n  !!merge <<: *b\n  q: '3'\n",
        "data",
        {"p": "1", "q": "3"},
    ),
    (
        "merge-non-specific",
        H.format(kind="ConfigMap") + "b: &b {p: '1'}\ndata:\n  ! <<: *b\n  q: '3'\n",
        "data",
        {"p": "1", "q": "3"},
    ),
    # go-yaml v2 (decode.go mapping/merge): keys set in document order, a merge
    # overwriting what came before it; in a list the earlier mapping wins
    (
        "merge-after-the-key",
        H.format(kind="ConfigMap") + "data:\n  q: '0'\n  <<: {q: '1', p: '2'}\n",
        "data",
        {"p": "2", "q": "1"},
    ),
    (
        "merge-twice",
        H.format(kind="ConfigMap") + "data:\n  <<: {a: '1'}\n  <<: {a: '2'}\n",
        "data",
        {"a": "2"},
    ),
    (
        "merge-key-merge",
        H.format(kind="ConfigMap") + "data:\n  <<: {a: '1'}\n  a: '2'\n  <<: {a: '3', b: '4'}\n",
        "data",
        {"a": "3", "b": "4"},
    ),
    (
        "merge-list-earlier-wins",
        H.format(kind="ConfigMap") + "data:\n  a: '0'\n  <<: [{a: '1'}, {a: '2', b: '3'}]\n",
        "data",
        {"a": "1", "b": "3"},
    ),
    (
        "merge-of-a-merging-mapping",
        H.format(kind="ConfigMap")
        + "b: &b {p: '1', <<: {p: '2', q: '3'}}\ndata:\n  p: '0'\n  <<: *b\n",
        "data",
        {"p": "2", "q": "3"},
    ),
    (
        "merge-the-name",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  <<: {name: app-v2}\n"
        "data: {k: v}\n",
        "metadata",
        {"name": "app-v2"},
    ),
    (
        "merge-quoted-is-a-key",
        H.format(kind="ConfigMap") + "data:\n  '<<': lit\n  q: '3'\n",
        "data",
        {"<<": "lit", "q": "3"},
    ),
    (
        "merge-str-is-a-key",  # (its value a mapping: no string, refused as such)
        H.format(kind="ConfigMap") + "b: &b {p: '1'}\ndata:\n  !!str <<: *b\n",
        "data",
        {"<<": {"p": "1"}},
    ),
    (
        "secret-stringdata-binary",
        H.format(kind="Secret") + "stringData:\n  s: !!binary aGVsbG8=\n",
        "stringData",
        {"s": "hello"},
    ),
    (
        "name-binary",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: !!binary YXBw\ndata: {k: v}\n",
        "metadata",
        {"name": "app"},
    ),
]

# Documents where cmhash does not follow kubectl, on purpose: id -> why. ``!!binary``
# where Kubernetes expects base64: kubectl sends the decoded bytes, which the API server
# decodes again (most likely a mistake, and an error there unless the bytes are base64
# themselves): refused, with what to write instead.
DIFFERENT_DOCS: list[tuple[str, str, str, Any, str]] = [
    (
        "binarydata-binary",
        H.format(kind="ConfigMap") + "binaryData:\n  b: !!binary aGVsbG8=\n",
        "binaryData",
        {"b": "hello"},
        "is tagged !!binary: kubectl sends the decoded bytes where Kubernetes expects base64",
    ),
    (
        "secret-data-binary",
        H.format(kind="Secret") + "data:\n  d: !!binary aGVsbG8=\n",
        "data",
        {"d": "hello"},
        "is tagged !!binary: kubectl sends the decoded bytes where Kubernetes expects base64",
    ),
    (
        "duplicate-key",  # kubectl: the last one wins; kustomize refuses; so does cmhash
        H.format(kind="ConfigMap") + "data:\n  q: '1'\n  q: '3'\n",
        "data",
        {"q": "3"},
        "duplicate key 'q'",
    ),
    (
        # (yes is true: the same key; which value kubectl keeps is not fixed: sigs.k8s.io/yaml
        # documents the order of duplicate keys as undefined, and runs give either)
        "same-key-twice-for-kubernetes",
        H.format(kind="ConfigMap") + "data:\n  yes: '1'\n  'true': '3'\n",
        "data",
        EitherOf(({"true": "3"}, {"true": "1"})),
        "is the key 'true' for Kubernetes",
    ),
]


def kubectl_sends(text: str, directory: Path) -> Any:
    """The object kubectl decodes from ``text`` (JSON), or ERROR."""
    path = directory / "c.yaml"
    path.write_text(text)
    proc = subprocess.run(
        [tool("kubectl"), "label", "--local", "-f", str(path), "x=y", "-o", "json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return json.loads(proc.stdout) if proc.returncode == 0 else ERROR


@pytest.fixture(scope="module")
def kubectl(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """``text -> what kubectl decodes``, every text of this module decoded at once."""
    texts = [value_doc(v) for v, _ in VALUES] + [value_doc(v) for v in DIFFERENT]
    texts += [d[1] for d in DOCS] + [d[1] for d in DIFFERENT_DOCS]
    texts += [value_doc(plain) for plain, _ in PLAIN]
    tool("kubectl")
    dirs = [tmp_path_factory.mktemp("k") for _ in texts]
    with ThreadPoolExecutor(4) as pool:
        decoded = dict(zip(texts, pool.map(kubectl_sends, texts, dirs), strict=True))
    return decoded.__getitem__


def content(text: str, parser: str) -> dict[str, bytes]:
    src = SourceText("c.yaml", text)
    (root,) = parse_chunk(text, 0, backend(parser))
    (res,) = resources_of(src, 0, root)
    return dict(config_content(res).entries)


def refused(text: str, parser: str) -> str:
    """cmhash's one line for ``text``, which it must refuse: exit 2, at a place."""
    res = run_cmhash(["--no-config", "--parser", parser, "-"], stdin=text.encode())
    assert res.code == 2 and res.stdout == b"", res.stderr
    (line,) = res.stderr.splitlines()
    assert line.startswith("cmhash: <stdin>:"), line
    where = line.split(":")[2:4]
    assert all(n.isdigit() and int(n) > 0 for n in where), line
    return line


PARSERS = pytest.mark.parametrize("parser", ["fast", "exact"])


@PARSERS
@pytest.mark.parametrize(("value", "sent"), VALUES, ids=[v for v, _ in VALUES])
def test_a_value_is_read_as_kubectl_sends_it(value: str, sent: Any, parser: str) -> None:
    text = value_doc(value)
    if sent is ERROR:
        refused(text, parser)
    elif sent is None:  # null: the API server stores an empty string
        assert content(text, parser) == {"k": b""}
    elif isinstance(sent, str):
        assert content(text, parser) == {"k": sent.encode()}
    else:  # a number or a boolean in a map of strings: the API server refuses it
        assert "is not a string" in refused(text, parser)


@PARSERS
@pytest.mark.parametrize("value", list(DIFFERENT))
def test_an_unknown_tag_is_refused(value: str, parser: str) -> None:
    assert "unknown tag" in refused(value_doc(value), parser)


@PARSERS
@pytest.mark.parametrize(("name", "text", "field", "sent"), DOCS, ids=[d[0] for d in DOCS])
def test_a_document_is_read_as_kubectl_sends_it(
    name: str, text: str, field: str, sent: Any, parser: str
) -> None:
    if sent is ERROR:
        refused(text, parser)
    elif field == "metadata":
        src = SourceText("c.yaml", text)
        (res,) = resources_of(src, 0, parse_chunk(text, 0, backend(parser))[0])
        assert res.name == sent["name"]
    elif any(not isinstance(v, str) for v in sent.values()):
        assert "must be a string" in refused(text, parser)
    else:
        assert content(text, parser) == {k: v.encode() for k, v in sent.items()}


@PARSERS
@pytest.mark.parametrize(
    ("name", "text", "field", "sent", "message"),
    DIFFERENT_DOCS,
    ids=[d[0] for d in DIFFERENT_DOCS],
)
def test_a_document_cmhash_refuses_on_purpose(
    name: str, text: str, field: str, sent: Any, message: str, parser: str
) -> None:
    assert message in refused(text, parser)


@pytest.mark.integration
@pytest.mark.parametrize(("value", "sent"), VALUES, ids=[v for v, _ in VALUES])
def test_the_values_are_what_kubectl_sends(kubectl: Any, value: str, sent: Any) -> None:
    got = kubectl(value_doc(value))
    assert (got if got is ERROR else got["data"]["k"]) == sent


@pytest.mark.integration
@pytest.mark.parametrize(("value", "sent"), list(DIFFERENT.items()), ids=list(DIFFERENT))
def test_kubectl_keeps_an_unknown_tag_as_the_text(kubectl: Any, value: str, sent: Any) -> None:
    assert kubectl(value_doc(value))["data"]["k"] == sent[0]


@pytest.mark.integration
@pytest.mark.parametrize(
    ("name", "text", "field", "sent"),
    [d[:4] for d in DOCS + DIFFERENT_DOCS],
    ids=[d[0] for d in DOCS + DIFFERENT_DOCS],
)
def test_the_documents_are_what_kubectl_sends(
    kubectl: Any, name: str, text: str, field: str, sent: Any
) -> None:
    got = kubectl(text)
    if sent is ERROR:
        assert got is ERROR
    elif isinstance(sent, EitherOf):
        assert got[field] in sent
    elif field == "metadata":
        assert got["metadata"]["name"] == sent["name"]
    else:
        assert got[field] == sent


KINDS = {"bool": bool, "null": type(None), "int": int, "float": float, "str": str}


@pytest.mark.integration
@pytest.mark.parametrize(("plain", "kind"), PLAIN, ids=[p for p, _ in PLAIN])
def test_the_plain_scalar_table_is_what_kubectl_sends(kubectl: Any, plain: str, kind: str) -> None:
    """tests/parse/test_k8syaml.py's table of plain scalars, against kubectl: the JSON
    type it sends (an int beyond int64 comes back as a float in its output: a number)."""
    got = kubectl(value_doc(plain))
    if kind == "float" and plain.lower().endswith(("nan", "inf")):
        assert got is ERROR  # json.Marshal: unsupported value
        return
    value = got["data"]["k"]
    numbers = (int, float)
    if kind in ("int", "float"):
        assert isinstance(value, numbers) and not isinstance(value, bool), value
    else:
        assert isinstance(value, KINDS[kind]), value


@pytest.mark.parametrize(("value", "sent"), VALUES, ids=[v for v, _ in VALUES])
def test_the_c_tree_builder_hands_every_tag_to_the_event_builder(value: str, sent: Any) -> None:
    """The fast path's C builder builds only what has no tag: a tagged value is read by
    the Python builder over libyaml's events (the rules above), never by the C one."""
    build = backend("fast").ctree
    if build is None:
        if IN_CI:
            pytest.fail("the C tree builder was not compiled")
        pytest.skip("the C tree builder was not compiled")
    assert build(value_doc(value), 0) is None
    assert build(value_doc('"plain"'), 0) is not None  # (the same document, untagged)


@PARSERS
def test_the_checksum_follows_what_the_pod_sees(parser: str) -> None:
    """The issue's case: ``"aGVsbG8="`` to ``!!binary aGVsbG8=`` changes what the pod
    sees (``aGVsbG8=`` to ``hello``), so it changes the checksum; ``!!binary aGVsbG8=``
    and ``"hello"`` are the same to the pod, and so to the checksum."""
    workload = (
        "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n"
        "  template:\n    spec:\n      containers:\n      - name: c\n"
        "        envFrom: [{configMapRef: {name: c}}]\n"
    )

    def checksum(value: str) -> str:
        res = run_cmhash(
            ["--no-config", "--parser", parser, "-"], stdin=(value_doc(value) + workload).encode()
        )
        assert res.code == 0, res.stderr
        return res.out.split("checksum/config: ")[1].split("\n")[0]

    assert checksum('"aGVsbG8="') != checksum("!!binary aGVsbG8=") == checksum('"hello"')


def _json_list(ensure_ascii: bool) -> str:
    """A List of a ConfigMap and a Deployment, as Python's ``json.dumps`` writes it."""
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    cm["data"] = {"greeting": "hi \U0001f600"}
    container = {"name": "c", "image": "i", "envFrom": [{"configMapRef": {"name": "c"}}]}
    dep = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "w"},
        "spec": {"template": {"spec": {"containers": [container]}}},
    }
    doc = {"apiVersion": "v1", "kind": "List", "items": [cm, dep]}
    return json.dumps(doc, ensure_ascii=ensure_ascii)


@PARSERS
def test_json_reads_an_escaped_surrogate_pair_as_one_character(parser: str) -> None:
    """``json.dumps`` writes 😀 as ``"\\ud83d\\ude00"`` (ensure_ascii, its default): in
    JSON one character (kubectl reads a stream that starts with "{" as JSON), in YAML
    no character. It was refused as a YAML syntax error; a lone one still is."""

    def checksum(text: str) -> str:
        res = run_cmhash(["--no-config", "--parser", parser, "-"], stdin=text.encode())
        assert res.code == 0, res.stderr
        return res.out.split('"checksum/config": "')[1][:64]

    escaped = _json_list(ensure_ascii=True)
    assert "\\ud83d\\ude00" in escaped
    assert checksum(escaped) == checksum(_json_list(ensure_ascii=False))
    assert "escape code" in refused(escaped.replace("\\ude00", ""), parser)


@pytest.mark.integration
def test_kubectl_reads_an_escaped_surrogate_pair_in_json(tmp_path: Path) -> None:
    cm = json.loads(_json_list(ensure_ascii=False))["items"][0]
    got = kubectl_sends(json.dumps(cm), tmp_path)
    assert got["data"] == {"greeting": "hi \U0001f600"}


def _referring(name: str, key: str = '"k"') -> str:
    return (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: w}\nspec:\n  template:\n"
        "    spec:\n      containers:\n      - name: c\n        env:\n        - name: E\n"
        f"          valueFrom: {{configMapKeyRef: {{name: {name}, key: {key}}}}}\n"
    )


# a reference's name or key as written -> what kubectl sends (JSON); the API server
# refuses a number or a boolean in these string fields
REF_SCALARS = [("1234", 1234), ("0x4D2", 1234), ("yes", True), ("'1234'", "1234"), ("cfg", "cfg")]


@PARSERS
@pytest.mark.parametrize(("written", "sent"), REF_SCALARS, ids=[w for w, _ in REF_SCALARS])
def test_a_reference_name_or_key_is_read_as_kubectl_sends_it(
    written: str, sent: Any, parser: str
) -> None:
    for text in (_referring(written), _referring("cfg", key=written)):
        if isinstance(sent, str):
            res = run_cmhash(["--no-config", "--parser", parser, "-"], stdin=text.encode())
            assert res.code == 0, res.stderr
        else:
            assert "must be a string" in refused(text, parser)


@pytest.mark.integration
@pytest.mark.parametrize(("written", "sent"), REF_SCALARS, ids=[w for w, _ in REF_SCALARS])
def test_kubectl_sends_a_reference_name_so(tmp_path: Path, written: str, sent: Any) -> None:
    got = kubectl_sends(_referring(written, key=written), tmp_path)
    ref = got["spec"]["template"]["spec"]["containers"][0]["env"][0]["valueFrom"]
    assert ref["configMapKeyRef"] == {"name": sent, "key": sent}
