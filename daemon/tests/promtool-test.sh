#!/bin/sh
# vmscoped's /metrics text (test_metrics --dump: two domains, a histogram,
# escaped label values, an absent and a present bound) through
# `promtool check metrics`, Prometheus's own parser and linter: no error,
# no lint finding.
# Usage: promtool-test.sh PATH-TO-test_metrics PATH-TO-promtool
set -u
dir=$(mktemp -d "${TMPDIR:-/tmp}/promtool-test.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
"$1" --dump "$dir/metrics.txt" >/dev/null || { echo "FAIL: test_metrics --dump"; exit 1; }
if ! "$2" check metrics <"$dir/metrics.txt" >"$dir/out" 2>&1 || [ -s "$dir/out" ]; then
	echo "FAIL: promtool check metrics:"
	sed 's/^/  | /' "$dir/out"
	exit 1
fi
echo "promtool check metrics: $(grep -c '^[a-z]' "$dir/metrics.txt") samples, no finding"
