#!/usr/bin/env bash
# The two README commands. `app`: install what is missing, build, open the
# visualiser on its built-in example. `test`: install, build, run every test.
# Both are idempotent: a second run installs nothing and rebuilds only changes.
# SAMPLESCOPE_CMAKE_ARGS adds configure flags (CI passes -DSAMPLESCOPE_WERROR=ON);
# SAMPLESCOPE_BUILD_DIR picks the build folder (default: build).
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=${SAMPLESCOPE_BUILD_DIR:-build}
packages=(cmake make ninja-build g++ pkg-config qt6-base-dev libqcustomplot-dev libeigen3-dev nlohmann-json3-dev
          libcli11-dev libbenchmark-dev libgl1-mesa-dev xvfb xauth python3-numpy python3-dev pybind11-dev ccache)

# The built-in language model behind generation (Debian's English trigram
# model) and sphinxbase, the independent scorer its tests compare against.
packages+=(pocketsphinx-en-us libsphinxbase-dev)
# bench/bench_gui_input types into the window through the X server (XTest).
packages+=(libx11-dev libxtst-dev)
# The desktop entry's and AppStream metadata's validators (the packaging_install
# test), and dpkg-shlibdeps for the .deb's dependencies (scripts/package_check.sh).
packages+=(desktop-file-utils appstream dpkg-dev)

install_missing() {
    local missing=()
    for package in "${packages[@]}"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
    done
    if ((${#missing[@]})); then
        echo "Installing: ${missing[*]}"
        local sudo=()
        [ "$(id -u)" -eq 0 ] || sudo=(sudo)
        "${sudo[@]}" apt-get update -qq
        DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
    fi
}

build() {
    # A new build folder uses Ninja, which compiles across targets without
    # waiting for each library to link; an existing one keeps its generator.
    local generator=()
    [ -f "$build_dir/CMakeCache.txt" ] || generator=(-G Ninja)
    # Through ccache, a second clone or build folder of the same sources (CI's
    # fresh clone, a branch) compiles only what differs: paths are hashed
    # relative to the clone, and the precompiled headers are accepted.
    local launcher=()
    if command -v ccache >/dev/null; then
        launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
        export CCACHE_BASEDIR="$PWD" CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
    fi
    # shellcheck disable=SC2086
    cmake -S . -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" ${SAMPLESCOPE_CMAKE_ARGS:-} >/dev/null
    cmake --build "$build_dir" -j"$(nproc)"
}

case "${1:-}" in
    app)
        install_missing
        build
        shift
        if [ -x "$build_dir/app/samplescope" ]; then
            if [ -z "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
                echo "No display found: rendering the window offscreen to $build_dir/samplescope.png instead."
                QT_QPA_PLATFORM=offscreen "$build_dir/app/samplescope" --screenshot "$build_dir/samplescope.png" "$@"
                echo "Wrote $build_dir/samplescope.png"
            else
                exec "$build_dir/app/samplescope" "$@"
            fi
        else
            echo "The desktop app is not built yet; tracing the contract's worked example with the CLI:"
            exec "$build_dir/app/samplescope-cli" trace --values "1,3,2,3,-1" --top-k 3 --top-p 0.8 --seed 0
        fi
        ;;
    test)
        install_missing
        build
        ctest --test-dir "$build_dir" --output-on-failure -j"$(nproc)"
        ;;
    *)
        echo "usage: scripts/dev.sh app|test" >&2
        exit 2
        ;;
esac
