"""``python -m cmhash`` and the console script: ``cli.entry``, with the cyclic garbage
collector off from the start. ``entry`` turns it off for the whole process anyway (what a
run builds is acyclic, and the process ends with the run); doing it here, before click and
cmhash's modules are imported, also spares the collections that importing them triggers
(about 4 ms of a small chart's 60). So this module imports nothing itself, but
``early``, which makes a signal during those imports one line and its exit code."""

from cmhash.runtime import early

early.install()  # a signal during the imports: one line and its exit code, no traceback


def entry() -> None:
    import gc

    gc.disable()
    from cmhash.cli.main import entry as run

    run()


if __name__ == "__main__":
    entry()
