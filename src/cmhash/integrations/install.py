"""What the integrations need installed: the Helm 4 plugin directory shipped in the
package, and the kustomize legacy exec transformer (a small script)."""

from __future__ import annotations

import os
import shlex
import shutil
import sys

KUSTOMIZE_GROUP, KUSTOMIZE_VERSION, KUSTOMIZE_KIND = "cmhash.io", "v1", "CmhashTransformer"


def helm_plugin_dir() -> str:
    """The directory of the Helm 4 post-renderer plugin (``postrenderer/v1``)."""
    from importlib import resources

    return str(resources.files("cmhash") / "data" / "helm" / "cmhash")


def kustomize_plugin_home() -> str:
    """Where kustomize looks: $KUSTOMIZE_PLUGIN_HOME, else $XDG_CONFIG_HOME/kustomize/plugin,
    else ~/.config/kustomize/plugin."""
    env = os.environ.get("KUSTOMIZE_PLUGIN_HOME")
    if env:
        return env
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(xdg, "kustomize", "plugin")


def self_command() -> list[str]:
    """How to run this very cmhash from a script: the console script beside the
    interpreter, else the one on PATH, else ``python -m cmhash``."""
    beside = os.path.join(os.path.dirname(sys.executable), "cmhash")
    if os.access(beside, os.X_OK):
        return [os.path.abspath(beside)]
    found = shutil.which("cmhash")
    return [os.path.abspath(found)] if found else [sys.executable, "-m", "cmhash"]


def install_kustomize_plugin(home: str | None = None) -> str:
    """Write the legacy exec transformer where kustomize finds it; return its path."""
    home = home or kustomize_plugin_home()
    target = os.path.join(
        os.path.abspath(home),
        KUSTOMIZE_GROUP,
        KUSTOMIZE_VERSION,
        KUSTOMIZE_KIND.lower(),
        KUSTOMIZE_KIND,
    )
    os.makedirs(os.path.dirname(target), exist_ok=True)
    command = " ".join(shlex.quote(w) for w in self_command())
    script = (
        "#!/bin/sh\n"
        "# cmhash as a kustomize legacy exec transformer. kustomize passes the\n"
        "# transformer config file as $1 (options: the .cmhash.yaml keys), then the\n"
        "# config's argsOneLiner words; resources come on stdin.\n"
        'config="$1"; shift\n'
        f'exec {command} --config "$config" "$@" -\n'
    )
    from cmhash.write.writer import write_new_file

    write_new_file(target, script, mode=0o755)
    return target
