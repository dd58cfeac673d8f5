# Self-test of the harness: a test that hangs is killed at its timeout and
# reported as timed out.
# vmtest-expect-fail: timed out after 10s
# vmtest-timeout: 10

host_main() {
	sleep 3600
}
