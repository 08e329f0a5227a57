#!/usr/bin/env bash
# Builds the .deb, installs it with dpkg, runs both installed programs (the
# window drawn offscreen to a PNG), then removes the package again.
#   scripts/package_check.sh [SCREENSHOT.png]
# As root on Debian 12 with the build dependencies (scripts/dev.sh) in place.
# SAMPLESCOPE_PACKAGE_DIR picks the build folder (default build-package): a
# folder of its own that builds only the two programs and the icon.
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=${SAMPLESCOPE_PACKAGE_DIR:-build-package}
screenshot=$(realpath -m "${1:-$build_dir/install-check.png}")
sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)

if dpkg-query -W -f='${Status}' samplescope 2>/dev/null | grep -q "install ok installed"; then
    echo "package_check: a samplescope package is installed already; remove it first (dpkg -r samplescope)" >&2
    exit 1
fi

generator=()
[ -f "$build_dir/CMakeCache.txt" ] || generator=(-G Ninja)
# No tests or benchmarks: `cpack` installs without building every target first.
# shellcheck disable=SC2086
cmake -S . -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DSAMPLESCOPE_BENCHMARKS=OFF \
    -DCMAKE_SKIP_INSTALL_ALL_DEPENDENCY=ON ${SAMPLESCOPE_CMAKE_ARGS:-} >/dev/null
cmake --build "$build_dir" -j"$(nproc)" --target samplescope samplescope-cli samplescope_icon
rm -f "$build_dir"/samplescope_*.deb
(cd "$build_dir" && cpack -G DEB)
deb=$(ls "$build_dir"/samplescope_*.deb)
echo "== $deb"
dpkg-deb --field "$deb" Package Version Architecture Maintainer Depends

installed=0
remove() {
    if ((installed)); then
        "${sudo[@]}" dpkg -r samplescope >/dev/null
        echo "== removed samplescope"
    fi
}
trap remove EXIT
"${sudo[@]}" dpkg -i "$deb"
installed=1
dpkg -L samplescope | grep -E '^/usr/(bin/|share/(applications|metainfo|icons|mime)/.*\.[a-z]+$)'

# Every library the programs need is found without the build tree.
for program in /usr/bin/samplescope /usr/bin/samplescope-cli; do
    if ldd "$program" | grep -q "not found"; then
        ldd "$program" | grep "not found" >&2
        exit 1
    fi
    if readelf -d "$program" | grep -qE 'R(UN)?PATH'; then
        echo "package_check: $program has an RPATH:" >&2
        readelf -d "$program" | grep -E 'R(UN)?PATH' >&2
        exit 1
    fi
done
trace=$(/usr/bin/samplescope-cli trace --values "1,3,2,3,-1" --top-k 3 --top-p 0.8 --seed 0)
grep -Eq '"token": ?3[,}]' <<<"$trace"
echo "== samplescope-cli: the worked example draws token 3"
# From / so nothing of the repository is at hand.
(cd / && QT_QPA_PLATFORM=offscreen /usr/bin/samplescope --screenshot "$screenshot" --window-size 1280x720)
echo "== samplescope drew $screenshot"
