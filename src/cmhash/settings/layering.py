"""Settings from their layers: defaults < config file < a KRM functionConfig < the
command line. The config file's module (config.py) is imported only when there is a
config file or a functionConfig to read, or --secret-key-env or --compat to parse."""

from __future__ import annotations

import os
from typing import Any

from cmhash.errors import UsageError
from cmhash.settings.values import PLAIN_KEYS, Settings, find_config, validate_annotation_key


def _jobs_mode(settings: Settings) -> str:
    """The Job mode as the config file's ``jobs:`` spells it."""
    return "rename" if settings.jobs_rename else ("true" if settings.jobs else "false")


def layered(
    options: dict[str, Any],
    function_config: dict[str, Any] | None = None,
    *,
    read_lock: bool = True,
    keyless: bool = False,
) -> Settings:
    """Defaults < config file < a KRM functionConfig < command-line ``options`` (the
    values of the options, by name, None where not given). ``read_lock``: read the lock
    file the settings name (``cmhash lock`` writes one instead). ``keyless``: for a run
    whose outcome no key decides (``cmhash restart``), the config's ``secretKeyEnv`` is
    not read."""
    settings = Settings()
    config_path = options.get("config_path")
    if config_path is None and not options.get("no_config"):
        config_path = find_config()
    if config_path:
        from cmhash.settings.config import (
            load_config_file,
            overridden_profiles,
            settings_from_mapping,
        )

        data = load_config_file(config_path)
        if keyless:
            data = {k: v for k, v in data.items() if k != "secretKeyEnv"}
        settings = settings_from_mapping(data, settings)
        settings = settings._replace(notes=overridden_profiles(data, config_path))
        config_dir = os.path.dirname(os.path.abspath(config_path))
        settings = settings._replace(
            config_file=config_path,
            paths=tuple(
                p if os.path.isabs(p) else os.path.relpath(os.path.join(config_dir, p))
                for p in settings.paths
            ),
            scopes=tuple(
                os.path.normpath(os.path.join(config_dir, p.rstrip("/") or "/"))
                for p in settings.scopes
            ),
            lock_file=settings.lock_file
            and os.path.relpath(os.path.join(config_dir, settings.lock_file)),
        )
    if function_config:
        from cmhash.settings.config import overridden_profiles, settings_from_mapping

        settings = settings_from_mapping(function_config, settings)
        notes = overridden_profiles(function_config, "functionConfig")
        settings = settings._replace(notes=settings.notes + notes)
    key = options.get("annotation_key")
    if key is not None:
        problem = validate_annotation_key(key)
        if problem:
            raise UsageError(f"--annotation-key {key!r}: {problem}")
    from cmhash.read.inputs import exclude_problem

    for pattern in options.get("exclude") or ():
        problem = exclude_problem(pattern)
        if problem:
            raise UsageError(f"--exclude {pattern!r}: {problem}")
    secret_env, compat = options.get("secret_key_env"), options.get("compat")
    if secret_env or compat:
        from cmhash.settings.config import parse_compat, secret_key_from_env
    jobs, rename = options.get("jobs"), options.get("rename_jobs")
    # the command line's Job mode over the config file's ``jobs:`` (cli/main.py refuses
    # two contradictory options): --jobs=annotate turns a configured rename off, a plain
    # --jobs keeps the configured mode
    if options.get("annotate_jobs"):
        jobs, rename = True, False
    configured = _jobs_mode(settings)
    settings = settings.merged(
        **{field: options.get(field) for _, field in PLAIN_KEYS},
        jobs=True if rename else jobs,
        jobs_rename=True if rename else (False if jobs is False or rename is False else None),
        secret_key=secret_key_from_env(secret_env) if secret_env else None,
        parser=options.get("parser"),
        max_input_bytes=options.get("max_input_bytes"),
        workers=options.get("workers"),
        compat=parse_compat(compat) if compat else None,
        exclude=settings.exclude + tuple(options.get("exclude") or ()) or None,
        verbose=options.get("verbose") or None,
        quiet=options.get("quiet"),
    )
    if settings.config_file and _jobs_mode(settings) != configured:
        settings = settings._replace(
            notes=(
                *settings.notes,
                f"{settings.config_file}: jobs: {configured} is overridden by the command "
                f"line (Jobs: {_jobs_mode(settings)})",
            )
        )
    lock_file = options.get("lock") or settings.lock_file
    if lock_file and read_lock:
        from cmhash.plan.lockfile import read_lock as read

        settings = settings._replace(
            lock_file=lock_file, lock=read(lock_file, settings.max_input_bytes)
        )
    from cmhash.runtime.progress import wanted

    return settings._replace(progress=function_config is None and wanted(quiet=settings.quiet))
