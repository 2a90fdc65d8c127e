"""The command line, and only that: click options -> Settings (settings.layered) -> the
pipeline (app.run) -> output and an exit code (deliver.py). The one place that exits.

This module holds the group (the default command, the help layout, the typo check) and
the console entry. Each command lives in its module (inject.py; views.py: explain,
report; tools.py: patches, the plugins, ci-report and the merge-request comments),
imported when the command is first looked up, as pip imports only the command it runs:
a plain run loads inject's."""

from __future__ import annotations

import itertools
import os
import sys
from collections.abc import Iterator, MutableMapping, Sequence

import click

from cmhash import __version__
from cmhash.cli.options import EXIT_CODES_HELP
from cmhash.errors import EXIT_INPUT, EXIT_OK, UsageError
from cmhash.output import log

DEFAULT_COMMAND = "inject"
_JOBS_FORMS = {"--jobs=rename": "--rename-jobs", "--jobs=annotate": "--annotate-jobs"}
# what each Job option asks for: two options asking for different modes contradict each
# other (``--jobs`` turns Jobs on in any mode, so it goes with either of the others)
_JOBS_MODES = {
    "--jobs": None,
    "--jobs=annotate": "annotate",
    "--annotate-jobs": "annotate",
    "--jobs=rename": "rename",
    "--rename-jobs": "rename",
    "--no-jobs": "off",
}


def refuse_contradictory_jobs(args: list[str]) -> None:
    """``--jobs=rename --no-jobs``, ``--jobs=annotate --jobs=rename``, ``--jobs --no-jobs``:
    a usage error naming both, instead of the last one silently winning (the command line
    against ``jobs:`` in the config file is not a contradiction: the command line wins,
    as for every other setting)."""
    seen: list[str] = []
    for arg in args:
        if arg == "--":
            break
        if arg.startswith("--jobs=") and arg not in _JOBS_MODES:
            raise UsageError(f"{arg}: use --jobs, --jobs=annotate, --jobs=rename or --no-jobs")
        if arg in _JOBS_MODES:
            seen.append(arg)
    for first, second in itertools.combinations(seen, 2):
        a, b = _JOBS_MODES[first], _JOBS_MODES[second]
        if a != b and (a == "off" or b == "off" or None not in (a, b)):
            raise UsageError(f"{first} and {second} contradict each other: give only one of them")


class Commands(MutableMapping[str, click.Command]):
    """A group's commands (click's ``Group.commands`` is any mutable mapping): name ->
    the module that defines it, imported when the command is first looked up. The
    command is the module's attribute of the same name (``ci-report``: ``ci_report``).
    Names, membership and order need no import; ``--help`` imports them all."""

    def __init__(self, modules: dict[str, str]) -> None:
        self._modules = dict(modules)
        self._loaded: dict[str, click.Command] = {}

    def __getitem__(self, name: str) -> click.Command:
        command = self._loaded.get(name)
        if command is None:
            import importlib

            module = importlib.import_module(self._modules[name])
            command = self._loaded[name] = getattr(module, name.replace("-", "_"))
        return command

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._modules.setdefault(name, "")  # (given, not imported)
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        del self._modules[name]
        self._loaded.pop(name, None)

    def __contains__(self, name: object) -> bool:
        return name in self._modules  # (Mapping's would import the command)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __len__(self) -> int:
        return len(self._modules)


class DefaultGroup(click.Group):
    """``cmhash [OPTIONS] PATH...`` means ``cmhash inject [OPTIONS] PATH...``; the help
    shows inject's options too; a mistyped command is not taken for a file name."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        # --jobs=rename / --jobs=annotate: --jobs stays a flag (a PATH may follow it)
        refuse_contradictory_jobs(args)
        args = [_JOBS_FORMS.get(a, a) if a.startswith("--jobs=") else a for a in args]
        if not args or (
            args[0] not in self.commands and args[0] not in ("--help", "-h", "--version")
        ):
            if args:
                self._refuse_typo(args[0])
                self._refuse_late_command(args)
            args = [DEFAULT_COMMAND, *args]
        return super().parse_args(ctx, args)

    def _refuse_typo(self, word: str) -> None:
        """``cmhash explian x``: no such file, but close to a command: say so."""
        if word.startswith("-") or os.path.lexists(word):
            return
        import difflib

        close = difflib.get_close_matches(
            word, [c for c in self.commands if c != "inject"], n=1, cutoff=0.75
        )
        if close:
            raise UsageError(f"no such command or file {word!r}; did you mean 'cmhash {close[0]}'?")

    def _refuse_late_command(self, args: list[str]) -> None:
        """``cmhash -q patches - --helmrelease F``: the options before it make the command
        a path of inject's, and click would stop at the first option inject does not
        know; say where the command goes instead (a command's name that is a file is a
        file, and an option's value is a value)."""
        if not any(a in self.commands for a in args):
            return  # (the common case: no word of the line is a command)
        inject = self.commands[DEFAULT_COMMAND]
        takes_value = {
            name
            for p in inject.params
            if isinstance(p, click.Option) and not p.is_flag and not p.count
            for name in p.opts
        }
        i = 0
        while i < len(args):
            arg = args[i]
            if arg == "--":
                return
            if arg.startswith("--"):
                i += 1 if "=" not in arg and arg in takes_value else 0
            elif arg.startswith("-") and arg != "-":  # -q, -qn VALUE, -nVALUE
                short = next((j for j, c in enumerate(arg[1:], 1) if f"-{c}" in takes_value), 0)
                i += 1 if short == len(arg) - 1 else 0
            elif arg in self.commands and not os.path.lexists(arg):
                import shlex

                foreign = self._not_options_of(arg, args[:i], takes_value)
                if foreign:
                    which = "those are options" if foreign[1:] else "that is an option"
                    raise UsageError(
                        f"{arg}: no such file or directory (cmhash {arg} takes no "
                        f"{', '.join(foreign)}: {which} of cmhash's default command, "
                        f"inject; see cmhash {arg} --help)"
                    )
                line = shlex.join([arg, *args[:i], *args[i + 1 :]])
                raise UsageError(
                    f"{arg}: no such file or directory (a command comes first: cmhash {line})"
                )
            i += 1

    def _not_options_of(self, name: str, before: list[str], takes_value: set[str]) -> list[str]:
        """The options of ``before`` (written before the command) that it does not take
        (``takes_value``: inject's options that take a value: -nVALUE)."""
        known = {o for p in self.commands[name].params for o in (*p.opts, *p.secondary_opts)}
        out = []
        for arg in before:
            if arg.startswith("--"):
                opts = [arg.split("=", 1)[0]]
            elif arg.startswith("-") and arg != "-":
                opts = [f"-{c}" for c in arg[1:]]  # -qn: -q and -n; -nshop: -n
                cut = next((j + 1 for j, o in enumerate(opts) if o in takes_value), len(opts))
                opts = opts[:cut]
            else:
                continue
            out += [o for o in opts if o not in known and o not in out]
        return out

    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        formatter.write_usage("cmhash", "[inject] [OPTIONS] [PATH]...")
        formatter.write_usage("cmhash", "COMMAND [ARGS]...", prefix="       ")

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The default command's options come first: they are what most runs use."""
        inject = self.commands[DEFAULT_COMMAND]
        sub = click.Context(inject, info_name=DEFAULT_COMMAND, parent=ctx)
        first = ("in_place", "check", "show_diff", "namespace", "strict", "annotation_key")
        params = sorted(
            (p for p in inject.get_params(sub) if isinstance(p, click.Option) and p.name != "help"),
            key=lambda p: first.index(p.name) if p.name in first else len(first),
        )
        rows = [r for p in params for r in [p.get_help_record(sub)] if r]
        with formatter.section("Options (of inject, the default command)"):
            formatter.write_dl(rows)
        super().format_options(ctx, formatter)


# command -> the module that defines it (as the function of that name, - read as _)
COMMANDS = {
    "inject": "cmhash.cli.inject",
    "explain": "cmhash.cli.views",
    "report": "cmhash.cli.views",
    "patches": "cmhash.cli.tools",
    "helm-plugin-dir": "cmhash.cli.tools",
    "install-kustomize-plugin": "cmhash.cli.tools",
    "ci-report": "cmhash.cli.tools",
    "gitlab-note": "cmhash.cli.tools",
    "github-comment": "cmhash.cli.tools",
    "lock": "cmhash.cli.lock",
    "restart": "cmhash.cli.lock",
    "lock-request": "cmhash.cli.lock",
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
    except (KeyboardInterrupt, signals.Terminated, Exception) as exc:
        # a stop before outcome() ran or after it, or one Python wrapped in another error
        stop = signals.inside(exc)
        if stop is None:
            raise  # (a bug's, outside outcome(): Python's traceback)
        from cmhash.cli.exits import stopped

        code = stopped(stop)
    else:  # pragma: no cover - main always exits
        code = EXIT_OK
    signals.release()  # (main did, unless a signal came between outcome() and its end)
    for stream in (sys.stdout, sys.stderr):
        if stream is None:  # a descriptor closed when cmhash started (``>&-``)
            continue
        try:
            stream.flush()
        except (BrokenPipeError, OSError, ValueError):
            pass
    os._exit(code)
