#!/usr/bin/env bash
# Install what kcontrol needs from Debian, once: a headless JRE and ZooKeeper's jars.
# Idempotent: a second run finds both and does nothing.
set -euo pipefail

need=()
command -v java >/dev/null 2>&1 || need+=(default-jre-headless)
[ -f /usr/share/java/zookeeper.jar ] || need+=(zookeeper)

if [ ${#need[@]} -eq 0 ]; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "setup: missing Debian packages: ${need[*]}; run as root or install them: apt-get install -y ${need[*]}" >&2
    exit 1
fi
echo "setup: installing ${need[*]} with apt-get" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${need[@]}"
