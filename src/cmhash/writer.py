"""--in-place: all files are planned and verified before the first is replaced."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cmhash.source import atomic_write

if TYPE_CHECKING:
    from cmhash.app import FileResult


def write_files(files: list[FileResult]) -> None:
    for f in files:
        atomic_write(f.source.path, f.source.encode(f.text))
