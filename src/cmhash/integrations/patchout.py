"""Where ``cmhash patches`` puts its patches: standard output, a kustomization's
directory (the patch file and its entry, ``kustomization.py``) or a Flux HelmRelease's
``postRenderers`` (``helmrelease.py``); with ``--check``, whether that copy is current."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cmhash.errors import UsageError
from cmhash.integrations.patches import Patch, patch_file

if TYPE_CHECKING:
    from cmhash.integrations.patches import Render


def deliver(
    patches: list[Patch],
    kustomization_dir: str | None,
    helmrelease: str | None,
    patch_name: str,
    check: bool,
    field: str | None = None,
    render: Render | None = None,
    secret_key: bytes | None = None,
    quiet: bool = False,
) -> int:
    """Print the patches, or keep a kustomization's or a HelmRelease's copy current;
    the exit code. ``secret_key``: --secret-key-env's (a HelmRelease's record);
    ``quiet``: -q, no ``updated`` or ``note:`` lines (``stale:`` ones are the answer)."""
    from cmhash.errors import EXIT_CHANGED, EXIT_OK
    from cmhash.output import err, write_stdout

    if kustomization_dir is None and helmrelease is None:
        write_stdout(patch_file(patches))
        return EXIT_OK
    if kustomization_dir is not None:
        from cmhash.integrations import kustomization

        if not patch_name or "/" in patch_name or "\\" in patch_name or patch_name in (".", ".."):
            raise UsageError(
                f"--patch-file {patch_name!r}: a file name in the kustomization's directory"
            )
        plan = kustomization.plan(
            kustomization_dir, patch_name, patch_file(patches) if patches else None, field
        )
        stale = plan.stale
        if check:
            for what in stale:
                err(f"cmhash: stale: {what}")
            return EXIT_CHANGED if stale else EXIT_OK
        kustomization.apply(plan)
        lines = [*(f"updated {w}" for w in stale), *(f"note: {n}" for n in plan.notes)]
        for line in () if quiet else lines:
            err(f"cmhash: {line}")
        return EXIT_OK
    from cmhash.integrations import helmrelease as hr

    assert helmrelease is not None
    assert render is not None
    return hr.deliver(patches, helmrelease, check, render, secret_key, quiet)
