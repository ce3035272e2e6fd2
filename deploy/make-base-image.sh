#!/usr/bin/env bash
# Make a stand-in for python:3.11-slim-bookworm from Debian's own packages, for machines that reach Debian's
# archive but no container registry (the Dockerfile's default base comes from Docker Hub).
#
#   deploy/make-base-image.sh                        # as root; podman, debootstrap
#   podman build --format docker --build-arg BASE_IMAGE=localhost/python:3.11-slim-bookworm \
#       -f deploy/Dockerfile -t kutnahora-server .
#
# It debootstraps Debian 12 (bookworm, minbase) with python3.11, its headers (python3.11-dev) and venv,
# makes a virtual environment at /usr/local so that `python`, `python3` and an installable `pip` are in
# /usr/local/bin as in the official image, trims documentation, manuals, locales and apt's lists, and
# imports the tree with `podman import` (PATH, LANG and CMD set as the official image sets them).
# The slow part, debootstrap (1–3 minutes), is done once: an image that already exists under the name is
# kept (--force makes it again), and the root file system's tarball is cached (--cache DIR).
set -euo pipefail

usage() {
  cat <<'EOF'
usage: make-base-image.sh [--name IMAGE] [--mirror URL] [--cache DIR] [--force]

Make a stand-in python:3.11-slim-bookworm image from Debian's packages and import it into podman.

  --name IMAGE   the image's name (default: localhost/python:3.11-slim-bookworm)
  --mirror URL   Debian mirror for debootstrap (default: http://deb.debian.org/debian)
  --cache DIR    where the root file system's tarball is kept between runs
                 (default: ${XDG_CACHE_HOME:-$HOME/.cache}/kutnahora-base)
  --force        make the tarball and the image again even if they exist
EOF
}

NAME="localhost/python:3.11-slim-bookworm"
MIRROR="http://deb.debian.org/debian"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/kutnahora-base"
FORCE=0
while [ $# -gt 0 ]; do
  case "$1" in
    --name) NAME="$2"; shift 2 ;;
    --mirror) MIRROR="$2"; shift 2 ;;
    --cache) CACHE="$2"; shift 2 ;;
    --force) FORCE=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "make-base-image.sh: unknown argument $1" >&2; usage >&2; exit 2 ;;
  esac
done

for tool in podman debootstrap; do
  if ! command -v "$tool" >/dev/null; then
    echo "make-base-image.sh: $tool is not installed (apt-get install podman debootstrap)" >&2
    exit 1
  fi
done

if [ "$FORCE" = 0 ] && podman image exists "$NAME"; then
  echo "base image $NAME exists already (--force makes it again)"
  exit 0
fi

TARBALL="$CACHE/python3.11-slim-bookworm.tar"
if [ "$FORCE" = 1 ] || [ ! -s "$TARBALL" ]; then
  mkdir -p "$CACHE"
  ROOTFS="$(mktemp -d "$CACHE/rootfs.XXXXXX")"
  trap 'rm -rf "$ROOTFS"' EXIT
  echo "debootstrap bookworm into $ROOTFS (from $MIRROR)"
  debootstrap --variant=minbase \
    --include=ca-certificates,python3.11,python3.11-dev,python3.11-venv,python3-distutils,python3-pip-whl,python3-setuptools-whl \
    bookworm "$ROOTFS" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 || {
      tail -20 "$CACHE/debootstrap.log" >&2
      exit 1
    }
  # python, python3, pip and pip3 in /usr/local/bin, installing into /usr/local/lib/python3.11/site-packages.
  chroot "$ROOTFS" /usr/bin/python3.11 -m venv /usr/local
  chroot "$ROOTFS" /usr/local/bin/python -m pip --version
  # What the official slim image leaves out too.
  rm -rf "$ROOTFS"/var/lib/apt/lists/* "$ROOTFS"/var/cache/apt/*.bin "$ROOTFS"/var/cache/apt/archives/*.deb \
    "$ROOTFS"/usr/share/doc/* "$ROOTFS"/usr/share/man/* "$ROOTFS"/usr/share/info/* \
    "$ROOTFS"/usr/share/locale/* "$ROOTFS"/var/log/*.log "$ROOTFS"/var/log/apt/* "$ROOTFS"/tmp/*
  find "$ROOTFS" -name __pycache__ -type d -prune -exec rm -rf {} +
  # The same sources as the official image, so that `apt-get update` inside a build works.
  printf 'Types: deb\nURIs: %s\nSuites: bookworm bookworm-updates\nComponents: main\nSigned-By: %s\n' \
    "$MIRROR" /usr/share/keyrings/debian-archive-keyring.gpg >"$ROOTFS/etc/apt/sources.list.d/debian.sources"
  rm -f "$ROOTFS/etc/apt/sources.list"
  : >"$ROOTFS/etc/resolv.conf"
  tar --numeric-owner --xattrs -C "$ROOTFS" -cf "$TARBALL.part" .
  mv "$TARBALL.part" "$TARBALL"
fi

podman import \
  --change 'ENV PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'ENV PYTHON_VERSION=3.11' \
  --change 'CMD ["python3"]' \
  --message "python3.11 from Debian bookworm, venv at /usr/local" --quiet \
  "$TARBALL" "$NAME" >/dev/null
podman image inspect --format '{{.Id}} {{.Size}}' "$NAME" |
  awk -v name="$NAME" '{ printf "base image %s: %s, %.0f MB\n", name, substr($1, 1, 12), $2 / 1e6 }'
