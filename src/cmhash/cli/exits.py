"""Every way a run can end, mapped to its exit code in one place (and to one line on
stderr): 0 ok, 1 would change, 2 bad input or usage, 3 internal error (a bug), 130/143/
129 on SIGINT/SIGTERM/SIGHUP, 141 when stdout's reader went away."""

from __future__ import annotations

import os
import signal
import sys

import click

from cmhash.errors import (
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_PIPE,
    CmhashError,
    OutputClosed,
)
from cmhash.output import err
from cmhash.runtime import signals


def outcome(command: click.Command, args: list[str]) -> int:
    """Run the command line; every outcome as an exit code, never a traceback for input."""
    try:
        command.main(args=args, prog_name="cmhash", standalone_mode=False)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else EXIT_INPUT
    except (
        click.exceptions.Abort,
        KeyboardInterrupt,
        signals.Terminated,
        signals.RolledBack,
    ) as exc:
        return stopped(exc)
    except click.ClickException as exc:
        err(f"cmhash: {exc.format_message()}")
        return exc.exit_code if exc.exit_code else EXIT_INPUT
    except CmhashError as exc:
        err(f"cmhash: {exc}")
        return exc.exit_code
    except (BrokenPipeError, OutputClosed):
        # the reader went away (cmhash big.yaml | head): stop quietly; later flushes of
        # the closed pipe go to /dev/null instead of raising again at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_PIPE
    except RecursionError:
        err("cmhash: input nested too deeply")
        return EXIT_INPUT
    except Exception as exc:
        stop = signals.inside(exc)  # (a signal that Python wrapped in another error)
        if stop is not None:
            return stopped(stop)
        if isinstance(exc, OSError) and _echoing(exc):  # --help, --version on a full disk
            err(f"cmhash: cannot write the output: {exc.strerror or exc}")
            return EXIT_INPUT
        _internal_error(exc, verbose="-v" in args or "--verbose" in args)
        return EXIT_INTERNAL
    return EXIT_OK


def stopped(exc: BaseException) -> int:
    """The one line and the exit code of a run a signal stopped (Ctrl-C: click's Abort,
    a KeyboardInterrupt, or in the console script Terminated as for SIGTERM/SIGHUP)."""
    if isinstance(exc, signals.RolledBack):
        what = "interrupted" if exc.signum == signal.SIGINT else f"terminated ({exc.name})"
        err(f"cmhash: {what} while writing: every file was rolled back, none changed")
        return 128 + exc.signum
    if isinstance(exc, signals.Terminated):
        err(signals.line(exc.signum) + signals.after_write())
        return 128 + exc.signum
    err(f"cmhash: interrupted{signals.after_write()}")
    return EXIT_INTERRUPTED


def _echoing(exc: OSError) -> bool:
    """The error came from click's ``echo``: the output of --help, --version and the
    other texts click writes itself (cmhash's data goes through output.write_stdout)."""
    import traceback

    return any(
        f.name == "echo" and f"click{os.sep}" in f.filename
        for f in traceback.extract_tb(exc.__traceback__)
    )


def _internal_error(exc: Exception, *, verbose: bool) -> None:
    import traceback

    tb = traceback.extract_tb(exc.__traceback__)
    where = f" at {os.path.basename(tb[-1].filename)}:{tb[-1].lineno}" if tb else ""
    err(
        f"cmhash: internal error ({type(exc).__name__}{where}); please report it"
        + ("" if verbose else " (run with --verbose for the traceback)")
    )
    if verbose:
        traceback.print_exc()
