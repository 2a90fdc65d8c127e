"""The command line, and only that: click options -> Settings (settings.layered) -> the
pipeline (app.run) -> output and an exit code (deliver.py). The one place that exits.

This module holds the group and the console entry; each command lives in its own
module (inject.py; views.py: explain, report; tools.py: patches and the plugins; ci.py:
ci-report and the merge-request comments), imported when the command is looked up."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

import click

from cmhash import __version__
from cmhash.cli.group import EXIT_CODES_HELP, Commands, DefaultGroup
from cmhash.errors import EXIT_INPUT, EXIT_INTERRUPTED, EXIT_OK
from cmhash.output import err, log

# command -> the module that defines it (as the function of that name, - read as _)
COMMANDS = {
    "inject": "cmhash.cli.inject",
    "explain": "cmhash.cli.views",
    "report": "cmhash.cli.views",
    "patches": "cmhash.cli.tools",
    "helm-plugin-dir": "cmhash.cli.tools",
    "install-kustomize-plugin": "cmhash.cli.tools",
    "ci-report": "cmhash.cli.ci",
    "gitlab-note": "cmhash.cli.ci",
    "github-comment": "cmhash.cli.ci",
}


@click.group(
    cls=DefaultGroup,
    commands=Commands(COMMANDS),
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog=EXIT_CODES_HELP,
)
@click.version_option(__version__, prog_name="cmhash")
def cli() -> None:
    """Inject checksums of ConfigMaps and Secrets into the pod templates that use them,
    so that `kubectl apply` rolls exactly the pods whose configuration changed.

    Without a command, `inject` runs: `cmhash [OPTIONS] [PATH...]` reads files,
    directories or - (stdin; also when no PATH is given) and writes the stream to stdout.
    """
    from cmhash.native import cext

    cext.check_off()  # the developer switch, before anything binds the C


def main(argv: Sequence[str] | None = None) -> None:
    """Console entry point: run, log the exit code, exit with it."""
    args = list(sys.argv[1:] if argv is None else argv)
    log("run: cmhash " + " ".join(args))
    from cmhash.cli.exits import outcome

    code = outcome(cli, args)
    if code:
        log(f"exit {code}")
    from cmhash.runtime import signals

    signals.release()
    sys.exit(code)


def entry() -> None:
    """The console script: ``main``, then leave without tearing the interpreter down.

    Everything is flushed and every file is closed by then; skipping the teardown of a
    few thousand module objects saves about 20 ms, which is most of what a pre-commit
    hook or a Helm post-renderer run of a small chart costs beyond start-up.

    SIGTERM and SIGHUP are handled here, in the process that owns them (not in ``main``,
    which tests call in-process). So is the cyclic garbage collector, off for the whole
    process: what a run builds is acyclic (reference counting frees it) and the process
    ends with the run, while every collection walks all that a big run keeps (explain on
    5,000 apps spent 0.3 s of 2.5 s in collections), and what a run builds is held to
    the end instead of being freed object by object just before the exit (lifetime.py)."""
    import gc

    from cmhash.runtime import early, lifetime, signals

    early.install()  # (already, when started from __main__)
    gc.disable()
    lifetime.hold_until_exit()
    try:
        signals.install()  # from here on, the run's own handling (outcome, held)
        main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else EXIT_INPUT
    except KeyboardInterrupt:  # before outcome() could catch it, or after
        err("cmhash: interrupted")
        code = EXIT_INTERRUPTED
    except signals.Terminated as exc:
        err(f"cmhash: terminated ({exc.name})")
        code = 128 + exc.signum
    else:  # pragma: no cover - main always exits
        code = EXIT_OK
    early.install()  # (main did, unless a signal came between outcome() and its end)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (BrokenPipeError, OSError, ValueError):
            pass
    os._exit(code)
