"""Commands for the engines that run no post-renderer and for plugin installs:
``cmhash patches`` (kustomize patches, a kustomization or a Flux HelmRelease kept
current), ``cmhash helm-plugin-dir`` and ``cmhash install-kustomize-plugin``."""

from __future__ import annotations

from typing import Any

import click

from cmhash.cli.options import common_options
from cmhash.cli.runs import select_inputs
from cmhash.errors import EXIT_INPUT, UsageError


@click.command(
    epilog="""\b
Exit codes:
  0  patches written (or current, with --check)
  1  --check: the patch file or the kustomization's entry is stale
  2  bad input or usage
  3  internal error (a bug: please report it)"""
)
@common_options
@click.option(
    "--kustomization",
    "kustomization_dir",
    metavar="DIR",
    type=click.Path(file_okay=False),
    help="Keep DIR/--patch-file and its entry under patches: of DIR's kustomization "
    "current, instead of printing the patches.",
)
@click.option(
    "--helmrelease",
    metavar="FILE",
    type=click.Path(dir_okay=False),
    help="Keep cmhash's entry in FILE's spec.postRenderers (a Flux HelmRelease) current.",
)
@click.option(
    "--patch-file",
    default="cmhash-patches.yaml",
    show_default=True,
    metavar="NAME",
    help="The patch file's name in --kustomization DIR.",
)
@click.option(
    "--kustomize-field",
    type=click.Choice(["patches", "patchesStrategicMerge"]),
    default="patches",
    show_default=True,
    help="The kustomization field that lists the patch file: patches needs kustomize v5 "
    "(kubectl 1.27+, Flux, Argo CD); patchesStrategicMerge also works with kustomize v4.",
)
@click.option("--check", is_flag=True, help="Write nothing; exit 1 if what is kept is stale.")
def patches(
    paths: tuple[str, ...],
    kustomization_dir: str | None,
    helmrelease: str | None,
    patch_file: str,
    kustomize_field: str,
    check: bool,
    **opts: Any,
) -> None:
    """Print, for every workload cmhash would annotate, a kustomize strategic-merge patch
    that sets exactly that annotation: for engines that run no post-renderer (Flux,
    Argo CD Helm applications). Reads a render (files, directories or -) like inject."""
    from cmhash.app import pipeline as app
    from cmhash.deliver import report_run
    from cmhash.integrations import patches as gen
    from cmhash.integrations import patchout
    from cmhash.read.mode import Mode
    from cmhash.settings.layering import layered

    if kustomization_dir and helmrelease:
        raise UsageError("--kustomization and --helmrelease: give one")
    if check and not (kustomization_dir or helmrelease):
        raise UsageError("--check compares what --kustomization or --helmrelease keeps")
    settings = layered(opts)
    sources = select_inputs(paths, settings, Mode.STREAM).sources
    result = app.run(sources, settings, keep_plans=True, output=False)
    if not report_run(result, settings):  # the findings, as inject reports them
        raise SystemExit(EXIT_INPUT)
    found = gen.collect(result, settings.annotation_key, hooks=helmrelease is None)
    raise SystemExit(
        patchout.deliver(
            found,
            kustomization_dir,
            helmrelease,
            patch_file,
            check,
            kustomize_field,
            gen.config_names(result),
        )
    )


@click.command("helm-plugin-dir")
def helm_plugin_dir() -> None:
    """Print the directory of the Helm 4 post-renderer plugin shipped with cmhash.

    \b
    helm plugin install "$(cmhash helm-plugin-dir)"
    export HELM_PLUGINS="$(dirname "$(cmhash helm-plugin-dir)")"   # or, without installing"""
    from cmhash.integrations.install import helm_plugin_dir as where

    click.echo(where())


@click.command("install-kustomize-plugin")
@click.option(
    "--plugin-home",
    type=click.Path(file_okay=False),
    help="[default: $KUSTOMIZE_PLUGIN_HOME, else $XDG_CONFIG_HOME/kustomize/plugin, "
    "else ~/.config/kustomize/plugin]",
)
def install_kustomize_plugin(plugin_home: str | None) -> None:
    """Install the kustomize legacy exec transformer (kind CmhashTransformer).

    Then list a CmhashTransformer config under `transformers:` and run
    `kubectl kustomize --enable-alpha-plugins DIR`."""
    from cmhash.integrations.install import install_kustomize_plugin as install

    click.echo(install(plugin_home))
