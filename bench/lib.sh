# shellcheck shell=bash
# Helpers shared by the governance benchmark scripts; source it after setting TURNPIKE.

# port_of LOGFILE PATTERN [SECONDS]: the port of the first "PATTERN HOST:PORT" in LOGFILE,
# waiting up to SECONDS (default 5) for it to appear.
port_of() {
  local tries=$((${3:-5} * 10)) p i
  for ((i = 0; i < tries; i++)); do
    p=$(grep -oE "$2 [0-9.]+:[0-9]+" "$1" | grep -oE '[0-9]+$' || true)
    [[ -n $p ]] && { echo "$p"; return; }
    sleep 0.1
  done
  echo "no port in $1" >&2
  exit 1
}

# bench_key: provisions, on the gateway at $TURNPIKE_URL (admin token $TURNPIKE_ADMIN_TOKEN), a
# plan with a budget and RPM/TPM limits no load here reaches, a tenant on it and a key with its
# own RPM limit, and prints the key.
bench_key() {
  "$TURNPIKE" admin plans put bench --budget 1000000 --rpm 100000000 --tpm 1000000000 >/dev/null
  "$TURNPIKE" admin tenants create bench --plan bench >/dev/null
  "$TURNPIKE" admin --json keys create --tenant bench --rpm 100000000 | jq -r .key
}

# bench_exclusive: takes this machine's benchmark lock (flock on $TMPDIR/turnpike-bench.lock),
# waiting while another script holds it, and keeps it until this script and the processes it
# started exit. Two measurements at once measure each other: a cell run beside another one
# reports whatever share of the two cores it got.
bench_exclusive() {
  exec {bench_lock_fd}>"${TMPDIR:-/tmp}/turnpike-bench.lock"
  if ! flock -n "$bench_lock_fd"; then
    echo "waiting for the benchmark already running on this machine..." >&2
    flock "$bench_lock_fd"
  fi
}
