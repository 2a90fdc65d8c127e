"""The C extensions use CPython's public API only: no private function (``_PyType_Lookup``)
or private struct (a member descriptor's insides), which may change or go in any
release. Checked on the source and on the built modules' imported symbols, where the
only ``_Py`` names allowed are those the public macros expand to."""

from __future__ import annotations

import re
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest
from conftest import ROOT

SRC = ROOT / "src" / "cmhash"
C_FILES = sorted([*SRC.rglob("*.c"), *SRC.rglob("*.h")])

# what Py_DECREF, Py_None, Py_True, Py_False, Py_NotImplemented and the PY_SSIZE_T_CLEAN
# argument parsers expand to (all in the stable ABI)
MACRO_SYMBOLS = {
    "_Py_Dealloc",
    "_Py_NoneStruct",
    "_Py_TrueStruct",
    "_Py_FalseStruct",
    "_Py_NotImplementedStruct",
    "_Py_EllipsisObject",
    "_PyArg_ParseTuple_SizeT",
    "_PyArg_ParseTupleAndKeywords_SizeT",
    "_PyArg_VaParse_SizeT",
    "_Py_BuildValue_SizeT",
    "_Py_IncRef",
    "_Py_DecRef",
    # PyObject_Vectorcall and PyObject_CallOneArg, static inline in 3.10's headers
    "_PyObject_MakeTpCall",
    "_Py_CheckFunctionResult",
}
PRIVATE = re.compile(r"\b_Py[A-Za-z]\w*|\bPyMemberDescrObject\b|\bd_member\b")


def _code(path: Path) -> str:
    """The C without its comments and strings."""
    text = re.sub(r"/\*.*?\*/|//[^\n]*", " ", path.read_text(), flags=re.S)
    return re.sub(r'"(?:\\.|[^"\\])*"', '""', text)


@pytest.mark.parametrize("path", C_FILES, ids=lambda p: p.name)
def test_the_source_names_no_private_api(path: Path) -> None:
    assert PRIVATE.findall(_code(path)) == []


def test_the_built_modules_import_no_private_symbol() -> None:
    nm = shutil.which("nm")
    built = sorted(SRC.rglob("*" + sysconfig.get_config_var("EXT_SUFFIX")))
    if nm is None or not built:
        pytest.skip("no nm, or the extensions were not built")
    for so in built:
        out = subprocess.run(
            [nm, "-D", "--undefined-only", str(so)], capture_output=True, text=True, check=True
        ).stdout
        names = {line.split()[-1] for line in out.splitlines() if line.strip()}
        private = {n for n in names if n.startswith("_Py")} - MACRO_SYMBOLS
        assert private == set(), f"{so.name}: {sorted(private)}"
