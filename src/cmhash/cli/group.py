"""The command line's shape, in click: the default command, the help layout, the typo
check, and the commands loaded when asked for (a plain run imports the module of
``inject`` only, as pip imports the module of the command it runs)."""

from __future__ import annotations

import os
from collections.abc import Iterator, MutableMapping

import click

from cmhash.errors import UsageError

DEFAULT_COMMAND = "inject"
EXIT_CODES_HELP = """\b
Exit codes:
  0  success (nothing to change, or changes written)
  1  changes needed (--check, --diff --check)
  2  bad input or usage: YAML syntax, unreadable file, invalid config,
     unsafe edit, --strict finding
  3  internal error (a bug: please report it)"""
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
    for i, first in enumerate(seen):
        for second in seen[i + 1 :]:
            a, b = _JOBS_MODES[first], _JOBS_MODES[second]
            if a != b and (a == "off" or b == "off" or None not in (a, b)):
                raise UsageError(
                    f"{first} and {second} contradict each other: give only one of them"
                )


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
