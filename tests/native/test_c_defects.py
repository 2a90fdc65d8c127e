"""The latent defects a review of the C extensions found, each held by a test that
fails (or crashes) without its fix. A crash must not take the test run with it, so the
cases that would crash run in a child Python. CI also runs this file under AddressSanitizer
(scripts/c-checks.sh), which turns a use-after-free that happens not to crash into a
failure."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
from conftest import TESTS


def _child(code: str) -> subprocess.CompletedProcess[str]:
    # The children import test_cverify (tests/edit/), which imports conftest (tests/);
    # PYTHONPATH keeps what it holds after them (scripts/c-checks.sh: the sanitized build).
    path = [str(TESTS / "edit"), str(TESTS), *filter(None, [os.environ.get("PYTHONPATH")])]
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=TESTS,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(path)},
    )


def _ok(run: subprocess.CompletedProcess[str]) -> str:
    assert run.returncode == 0, f"exit {run.returncode}\n{run.stdout}\n{run.stderr[-3000:]}"
    return run.stdout


# ---------------------------------------------------------- check_edit and signal handlers


def test_check_edit_holds_what_it_walks_while_a_handler_changes_the_tree() -> None:
    """check_edit runs signal handlers every 4,096 events. A handler that drops the very
    list the walk is in (and the nodes in it) must not free them under the walk: the walk
    goes on over what it was given (True), it does not read freed memory."""
    pytest.importorskip("cmhash.native._ctree")
    out = _ok(
        _child(
            """
            import gc, signal
            from test_cverify import DEPLOYMENT, KEY, V, doc
            from cmhash.parse import backends, events
            from cmhash.parse.tree import get

            items = "        - a\\n" * 400_000
            old = doc("    metadata: {}\\n    spec:\\n      containers:\\n" + items)
            new = old.replace("    metadata: {}\\n",
                              f'    metadata: {{annotations: {{{KEY}: "{V}"}}}}\\n')
            roots = events.parse_chunk(old, 0, events.backend("fast"))
            seq = get(get(get(get(roots[0], "spec"), "template"), "spec"), "containers")
            assert seq is not None and len(seq.value) == 400_000
            done = []

            def handler(signum, frame):
                if not done:
                    done.append(1)
                    seq.value = [object() for _ in range(1000)]  # the list and its items freed
                    seq.style = seq.kind = "x" * 40

            gc.disable()  # (a gc callback would run the handler outside the walk)
            signal.signal(signal.SIGALRM, handler)
            signal.setitimer(signal.ITIMER_REAL, 0.002, 0.002)
            check = backends.ctree_check_edit()
            try:
                got = check(roots[0], new, DEPLOYMENT.template_path, KEY, V)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            print(bool(done), got)
            """
        )
    )
    assert out.split() == ["True", "True"]


# ---------------------------------------------------------------- find_refs and a style


def test_find_refs_with_a_deleted_style_slot_hands_the_pod_spec_to_python() -> None:
    """``del node.style`` leaves the slot empty; the C site walk read it as an object.
    Now the pod spec goes to refs.py, which says what is wrong (AttributeError), as the
    Python path alone does."""
    pytest.importorskip("cmhash.native._ctree")
    out = _ok(
        _child(
            """
            from cmhash.analyze import refs
            from cmhash.parse import events
            from cmhash.parse.tree import get, items

            spec = events.parse_chunk(
                "volumes:\\n- {name: v, configMap: {name: x}}\\n", 0, events.backend("fast")
            )[0]
            name = get(get(items(get(spec, "volumes"))[0], "configMap"), "name")
            del name.style
            for f in (refs.find_references, refs._py_find_references):
                try:
                    f(spec, "spec")
                    print("made")
                except AttributeError:
                    print("AttributeError")
            """
        )
    )
    assert out.split() == ["AttributeError", "AttributeError"]


# ------------------------------------------------------------------------------- _cpack


def test_the_packer_memo_holds_what_it_has_seen() -> None:
    """A record whose slots are read through __getattribute__ gets a fresh object per
    read, freed once written; the next fresh object may take its address. The memo,
    keyed by address, must hold what it has seen or the second is packed as the first."""
    pytest.importorskip("cmhash.native._cpack")
    out = _ok(
        _child(
            """
            from cmhash.native import _cpack

            class Fresh:
                __slots__ = ("a", "b", "c", "d")
                def __getattribute__(self, name):
                    return ("v-" + name + "-" * 30)[:-1] + "!"  # a new str each read

            entries = ((Fresh, 1, ("a", "b", "c", "d")),)
            index = {Fresh: 0}
            data = _cpack.pack([Fresh() for _ in range(50)], index, entries)
            wrong = 0
            for r in _cpack.unpack(data, entries):
                got = [object.__getattribute__(r, s) for s in Fresh.__slots__]
                wrong += got != [("v-" + s + "-" * 30)[:-1] + "!" for s in Fresh.__slots__]
            print(wrong)
            """
        )
    )
    assert out.split() == ["0"]


@pytest.mark.parametrize(
    "entries",
    [
        "((dict, 0, None),)",  # a tuple entry that is not a tuple class: written out of bounds
        "((Rec, 0, None),)",
        "((Rec, 1, None),)",  # a record without slot names
        "((Rec, 1, (1,)),)",  # slot names that are not str
        "((T, 1, ('a',)),)",  # a tuple class as a record
        "((Rec, 2, None),)",  # an enum without members
        "((Rec, 7, ()),)",  # an unknown how
        "((Rec, '1', ()),)",
        "((Rec, 1),)",  # not (cls, how, extra)
        "(None,)",
        "((1, 1, ('a',)),)",  # not a class
    ],
)
def test_pack_and_unpack_check_the_registry(entries: str) -> None:
    """pack() and unpack() refuse a registry that is not the shape transport.registry()
    makes (TypeError) instead of reading memory by it."""
    pytest.importorskip("cmhash.native._cpack")
    out = _ok(
        _child(
            f"""
            from cmhash.native import _cpack

            class Rec:
                __slots__ = ("a",)

            class T(tuple):
                pass

            entries = {entries}
            good = ((T, 0, None),)
            data = _cpack.pack([T((1, 2))], {{T: 0}}, good)
            cls = entries[0][0] if isinstance(entries[0], tuple) else Rec
            obj = T((1,)) if cls in (T, dict) else Rec()
            for call in (
                lambda: _cpack.unpack(data, entries),
                lambda: _cpack.pack([obj], {{type(obj): 0}}, entries),
            ):
                try:
                    call()
                    print("ok")
                except TypeError:
                    print("TypeError")
            """
        )
    )
    assert out.split() == ["TypeError", "TypeError"]


def test_pack_refuses_an_index_that_disagrees_with_the_entries() -> None:
    pytest.importorskip("cmhash.native._cpack")
    out = _ok(
        _child(
            """
            from cmhash.native import _cpack

            class Rec:
                __slots__ = ("a",)
            class T(tuple):
                pass
            r = Rec(); r.a = 1
            for index in ({Rec: 0}, {Rec: 5}, {Rec: "0"}, {Rec: -1}):
                try:
                    _cpack.pack([r], index, ((T, 0, None),))
                    print("ok")
                except TypeError:
                    print("TypeError")
            """
        )
    )
    assert out.split() == ["TypeError"] * 4


# ---------------------------------------------------------------- MemoryError is not UTF-8


@pytest.mark.parametrize("entry", ["build", "check_edit", "cjson"])
def test_a_memory_error_in_the_c_is_not_taken_for_text_that_is_not_utf8(entry: str) -> None:
    """Every allocation fails while the C encodes non-ASCII text: the MemoryError comes
    out, instead of the "not UTF-8" answer (None) that sent the text down another path."""
    pytest.importorskip("_testcapi")
    pytest.importorskip("cmhash.native._ctree")
    pytest.importorskip("cmhash.native._cjson")
    out = _ok(
        _child(
            f"""
            import _testcapi
            from cmhash.native import _cjson
            from cmhash.native import _ctree
            from cmhash.parse import events
            from cmhash.parse.tree import Node, SCALAR, SEQ, MAP

            text = "a: \\u00e9t\\u00e9\\n" * 1000
            root = events.parse_chunk("a: b\\n", 0, events.backend("fast"))[0]
            entry = {entry!r}
            if entry == "build":
                call = lambda: _ctree.build(text, 0, Node, (SCALAR, SEQ, MAP), 100, 1000000)
            elif entry == "check_edit":
                call = lambda: _ctree.check_edit(root, text, Node, (SCALAR, SEQ, MAP), (),
                                                 "k", "v")
            else:
                call = lambda: _cjson.document(text)  # (a str: encoded before any buffer)
            _testcapi.set_nomemory(0)
            try:
                got = call()
            except MemoryError:
                got = "MemoryError"
            finally:
                _testcapi.remove_mem_hooks()
            print(got)
            """
        )
    )
    assert out.split() == ["MemoryError"]
