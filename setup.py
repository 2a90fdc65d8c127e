"""The one compiled part: libyaml straight to the position tree (src/cmhash/parse/_ctree.c),
which makes a large run's parse about three times faster. Everything else is in
pyproject.toml.

The extension is optional: without a C compiler or libyaml's headers (Debian and Ubuntu:
``libyaml-dev``; Fedora: ``libyaml-devel``; Homebrew: ``libyaml``) the build goes on
without it, and cmhash parses through PyYAML with the same output (``cmhash -v`` says so
on big inputs).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "cmhash.parse._ctree",
            sources=["src/cmhash/parse/_ctree.c"],
            libraries=["yaml"],
            optional=True,
        )
    ]
)
