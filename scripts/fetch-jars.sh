#!/usr/bin/env bash
# Fetches the Java archives of one server Headroom runs from jars (Cassandra,
# DynamoDB Local) from Maven Central into Headroom's jar cache, once, and
# checks every file against the list committed beside its pom.
#
#   scripts/fetch-jars.sh NAME      NAME is a directory under deps/jars/
#
# deps/jars/NAME/pom.xml lists the artifacts; deps/jars/NAME/SHA256SUMS the
# checksums of every file they bring (regenerate it with --write-sums after
# changing the pom, and review the diff). The cache is $HEADROOM_JAR_CACHE,
# else /var/cache/headroom/jars for root, else ~/.cache/headroom/jars, one
# directory per NAME, world-readable; internal/deploy (jars.go) reads it
# from the same place.
set -euo pipefail
cd "$(dirname "$0")/.."
name=${1:?usage: scripts/fetch-jars.sh NAME [--write-sums]}
mode=${2:-}
src=deps/jars/$name
[ -f "$src/pom.xml" ] || { echo "fetch-jars: no $src/pom.xml" >&2; exit 2; }
# root's cache is outside its home, which the servers' unprivileged users
# cannot enter.
if [ "$(id -u)" = 0 ]; then default_cache=/var/cache/headroom/jars; else default_cache=$HOME/.cache/headroom/jars; fi
cache=${HEADROOM_JAR_CACHE:-$default_cache}
dest=$cache/$name

verify() { (cd "$1" && sha256sum --quiet --strict -c "$OLDPWD/$src/SHA256SUMS") >/dev/null 2>&1; }

if [ "$mode" != "--write-sums" ] && [ -f "$src/SHA256SUMS" ] && [ -d "$dest" ] && verify "$dest"; then
  echo "jars $name: cached in $dest"
  exit 0
fi
need=""
command -v java >/dev/null || need="$need openjdk-17-jre-headless"
command -v mvn >/dev/null || need="$need maven"
if [ -n "$need" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $need
  else
    echo "jars $name: not fetched, missing:$need (install them; tests that need $name are skipped)" >&2
    exit 0
  fi
fi
tmp=$(mktemp -d "$cache.$name.XXXXXX" 2>/dev/null || { mkdir -p "$cache"; mktemp -d "$cache/.$name.XXXXXX"; })
trap 'rm -rf "$tmp"' EXIT
echo "jars $name: fetching from Maven Central"
mvn -q -B -f "$src/pom.xml" dependency:copy-dependencies -DoutputDirectory="$tmp" -DincludeScope=runtime
if [ "$mode" = "--write-sums" ]; then
  (cd "$tmp" && find . -type f -printf '%P\n' | LC_ALL=C sort | xargs sha256sum) > "$src/SHA256SUMS"
  echo "jars $name: wrote $src/SHA256SUMS ($(wc -l < "$src/SHA256SUMS") files)"
elif ! verify "$tmp"; then
  echo "jars $name: a fetched file does not match $src/SHA256SUMS; not installed" >&2
  (cd "$tmp" && sha256sum -c "$OLDPWD/$src/SHA256SUMS" 2>&1 | grep -v ': OK$' | head -5) >&2 || true
  exit 1
fi
mkdir -p "$cache"
chmod 755 "$tmp" && chmod 644 "$tmp"/* 2>/dev/null || true
rm -rf "$dest"
mv "$tmp" "$dest"
trap - EXIT
echo "jars $name: $(ls "$dest" | wc -l) files in $dest"
