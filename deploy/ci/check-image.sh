#!/usr/bin/env bash
# The container checks CI runs (.ci/run calls this): the image built with podman on the stand-in base and
# smoke-tested (tests/deploy/test_image.py), and the compose file read by podman-compose.
#
#   deploy/ci/check-image.sh            (as root, from anywhere; installs podman and debootstrap if missing)
#
# podman's settings come from deploy/ci/containers.conf and storage.conf (CONTAINERS_CONF,
# CONTAINERS_STORAGE_CONF), not from the machine's. Where no container can start, it says why and the
# image tests are reported as skipped; a build or a test that fails makes it fail.
set -euo pipefail
cd "$(dirname "$0")/../.."
started=$SECONDS
export CONTAINERS_CONF="$PWD/deploy/ci/containers.conf"
export CONTAINERS_STORAGE_CONF="$PWD/deploy/ci/storage.conf"
BASE="${KUTNAHORA_BASE_IMAGE:-localhost/python:3.11-slim-bookworm}"
IMAGE="${KUTNAHORA_TEST_IMAGE:-localhost/kutnahora-server:ci}"

if ! command -v podman >/dev/null || ! command -v debootstrap >/dev/null || ! command -v runc >/dev/null; then
  echo "-- installing podman, buildah, crun, runc and debootstrap"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 \
    podman buildah crun runc fuse-overlayfs slirp4netns uidmap debootstrap >/dev/null
fi
# podman-compose with a `config` command: the one on PATH when it has it, else one from PyPI in CI's own
# virtual environment, .ci/.tools/podman-compose (Debian 12's podman-compose 1.0.3 has no `config`;
# tests/deploy/test_container.py uses the same one).
PODMAN_COMPOSE=podman-compose
if ! command -v podman-compose >/dev/null || ! podman-compose config --help >/dev/null 2>&1; then
  tools="$PWD/.ci/.tools/podman-compose"
  if ! "$tools/bin/podman-compose" config --help >/dev/null 2>&1; then
    echo "-- installing podman-compose from PyPI into .ci/.tools/podman-compose" \
      "($(command -v podman-compose >/dev/null && echo "the one installed has no config command" || echo "none installed"))"
    python3 -m venv "$tools" || {
      echo "python3 -m venv failed: install Debian's python3-venv"
      exit 1
    }
    "$tools/bin/pip" install -q --disable-pip-version-check podman-compose
  fi
  PODMAN_COMPOSE="$tools/bin/podman-compose"
fi

echo "-- podman-compose config (deploy/compose.yaml)"
(cd deploy && "$PODMAN_COMPOSE" -f compose.yaml config >/dev/null)
echo "compose.yaml: valid for podman-compose $("$PODMAN_COMPOSE" --version 2>/dev/null | head -1 | awk '{print $3}')"

echo "-- the stand-in base image (deploy/make-base-image.sh; kept between runs)"
deploy/make-base-image.sh --name "$BASE"

skip() {
  echo "SKIPPED: the container image checks: $1"
  echo "container checks: $((SECONDS - started)) s"
  exit 0
}
probe="$(podman run --rm --network none "$BASE" python -c 'print("ok")' 2>&1)" ||
  skip "no container can start here (podman run: ${probe//$'\n'/ })"

echo "-- podman build (--format docker keeps the HEALTHCHECK)"
build_started=$SECONDS
# pip in the build reaches PyPI as pip on this machine does: through the CA bundle the host trusts (a
# TLS-inspecting proxy's CA is in it, not in the image's), mounted for the build only.
cert=()
if [ -s /etc/ssl/certs/ca-certificates.crt ]; then
  cert=(--volume /etc/ssl/certs/ca-certificates.crt:/run/host-ca.crt:ro --build-arg PIP_CERT=/run/host-ca.crt)
fi
podman build --format docker --network host --pull=never --layers \
  --build-arg BASE_IMAGE="$BASE" "${cert[@]}" \
  --ignorefile deploy/Dockerfile.dockerignore -f deploy/Dockerfile -t "$IMAGE" . >/tmp/kutnahora-build.log 2>&1 || {
    tail -40 /tmp/kutnahora-build.log
    exit 1
  }
echo "built $IMAGE in $((SECONDS - build_started)) s: $(podman image inspect --format '{{.Size}}' "$IMAGE" |
  awk '{ printf "%.0f MB", $1 / 1e6 }') (base $(podman image inspect --format '{{.Size}}' "$BASE" |
  awk '{ printf "%.0f MB", $1 / 1e6 }'))"

echo "-- the image, run (tests/deploy/test_image.py)"
KUTNAHORA_TEST_IMAGE="$IMAGE" KUTNAHORA_TEST_ENGINE=podman \
  pytest -rs -p no:cacheprovider -s tests/deploy/test_image.py
echo "container checks: $((SECONDS - started)) s"
