#!/usr/bin/env bash
# Writes requirements/ci.txt: every package the locked CI run installs (pyproject.toml's
# [dev] extra, which holds [test], plus requirements/ci.in), pinned with hashes, for every
# platform and Python that pyproject.toml allows. See CONTRIBUTING.md, "The lock".
#
#   requirements/lock.sh                       # after a change to the dependencies: the
#                                              # other pins stay
#   requirements/lock.sh --upgrade             # refresh: the newest releases of everything
#   requirements/lock.sh --upgrade-package pyyaml
set -euo pipefail
cd "$(dirname "$0")/.."
UV_VERSION=0.13.9
uv=${UV:-}
if [ -z "$uv" ]; then
  tool="${TMPDIR:-/tmp}/cmhash-uv-$UV_VERSION"
  [ -x "$tool/bin/uv" ] || { python3 -m venv "$tool" && "$tool/bin/pip" install --quiet "uv==$UV_VERSION"; }
  uv="$tool/bin/uv"
fi
"$uv" pip compile pyproject.toml requirements/ci.in --extra dev --universal --generate-hashes \
  --custom-compile-command requirements/lock.sh --output-file requirements/ci.txt "$@"
