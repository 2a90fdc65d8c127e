"""The compiled parts: libyaml straight to the position tree, the self-check and the
readers of the tree that measurably pay (src/cmhash/native/_ctree.c; ARCHITECTURE.md has
what each one saves), which make a large run about 2.5 times faster; and explain's and
report's JSON writer (src/cmhash/native/_cjson.c). Everything else is in pyproject.toml.

The extension is optional: without a C compiler or libyaml's headers (Debian and Ubuntu:
``libyaml-dev``; Fedora: ``libyaml-devel``; Homebrew: ``libyaml``) the build goes on
without it, and cmhash parses through PyYAML with the same output (``cmhash -v`` says so
on big inputs).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "cmhash.native._ctree",
            sources=["src/cmhash/native/_ctree.c"],
            libraries=["yaml"],
            optional=True,
        ),
        # explain's and report's JSON (jsonout.py), needs only Python's headers
        Extension(
            "cmhash.native._cjson",
            sources=["src/cmhash/native/_cjson.c"],
            depends=["src/cmhash/native/_buffer.h"],  # (so that an sdist carries it)
            optional=True,
        ),
        # the forked workers' results, packed for the pipe (analyze/transport.py)
        Extension(
            "cmhash.native._cpack",
            sources=["src/cmhash/native/_cpack.c"],
            depends=["src/cmhash/native/_buffer.h"],
            optional=True,
        ),
    ]
)
