#!/usr/bin/env bash
# Put into a venv a pyzmq built against a libzmq with its draft API, for ZMQ_IN_BATCH_SIZE
# (docs/protocol.md §13, "A member or a spectator's sender can abort a process through
# libzmq"): without it any member can abort another member's node. pyzmq's wheels bundle a
# libzmq without drafts, and Debian's libzmq5 has none either, so this builds Debian's own
# source of libzmq (package zeromq3, 4.3.4 with Debian's patches) with drafts, installs it in
# the venv (VENV/lib, VENV/include), and builds pyzmq from its sdist against it, the library's
# directory in its RPATH.
#
# Usage: scripts/install_zmq_drafts.sh [VENV]   (default .venv; on Debian. As root it adds the
# Debian source list if there is none and installs the build's packages with apt-get; as
# another user, for a venv of its own, those must be there already). About a minute of CPU;
# 5.5 to 12.5 minutes on this 2-core machine at a load of 20-25. It ends by printing libzmq's
# version and whether it has drafts (`nertz --version` says the same), and fails if the
# venv's zmq has none.
set -euo pipefail
venv="$(cd "${1:-.venv}" && pwd)"
py="$venv/bin/python"
pyzmq="$("$py" -c 'import zmq; print(zmq.pyzmq_version())')"
if "$py" -c 'import sys, zmq; sys.exit(not zmq.has("draft"))'; then
    echo "$venv: pyzmq $pyzmq on libzmq $("$py" -c 'import zmq; print(zmq.zmq_version())') has drafts already"
    exit 0
fi
if ! command -v apt-get >/dev/null; then
    echo "install_zmq_drafts.sh: needs Debian's apt-get; elsewhere build libzmq with its" \
        "drafts (cmake -DENABLE_DRAFTS=ON) and then, in the venv:" \
        "ZMQ_PREFIX=<its prefix> ZMQ_DRAFT_API=1 pip install --no-binary pyzmq pyzmq" >&2
    exit 2
fi
if [ "$(id -u)" = 0 ]; then  # (not root: the source list and the packages must be there)
    src_list=/etc/apt/sources.list.d/nertz-debian-src.sources
    if ! grep -rqs '^Types:.*deb-src\|^deb-src ' /etc/apt/sources.list /etc/apt/sources.list.d/; then
        suite="$(. /etc/os-release && echo "$VERSION_CODENAME")"
        printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: %s %s-updates\n%s\n%s\n' \
            "$suite" "$suite" "Components: main" \
            "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg" >"$src_list"
        apt-get update -q
    fi
    apt-get install -y -q --no-install-recommends --no-upgrade dpkg-dev cmake g++ make \
        pkg-config libsodium-dev
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get source -q zeromq3 >/dev/null)  # unpacked, Debian's patches applied
srcdir="$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -n 1)"
cmake -S "$srcdir" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DENABLE_DRAFTS=ON \
    -DWITH_LIBSODIUM=ON -DENABLE_CURVE=ON -DWITH_DOCS=OFF -DBUILD_TESTS=OFF -DBUILD_STATIC=OFF \
    -DWITH_PERF_TOOL=OFF -DCMAKE_INSTALL_PREFIX="$venv" -DCMAKE_INSTALL_LIBDIR=lib \
    >"$work/build.log" 2>&1 || { tail -n 40 "$work/build.log"; exit 1; }
cmake --build "$work/build" -j "$(nproc)" >>"$work/build.log" 2>&1 \
    || { tail -n 40 "$work/build.log"; exit 1; }  # (its many warnings kept out of sight)
cmake --install "$work/build" >/dev/null

# The same pyzmq as the venv had, from its sdist, against that libzmq (pyzmq's own options).
ZMQ_PREFIX="$venv" ZMQ_DRAFT_API=1 "$py" -m pip install -q --force-reinstall --no-deps \
    --no-binary pyzmq "pyzmq==$pyzmq"
"$py" -c 'import zmq, sys; print("libzmq", zmq.zmq_version(), "drafts:", zmq.has("draft"));
sys.exit(not (zmq.has("draft") and zmq.has("curve") and hasattr(zmq, "IN_BATCH_SIZE")))'
