#!/usr/bin/env bash
# Runs the whole test suite, installing what it needs first (see scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --test
swift test "$@"
