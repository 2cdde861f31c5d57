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

# bench_workdir: a temporary directory $dir (readable by the postgres user) and the list
# $pids of the processes the script starts; on exit they are killed, a cluster started in
# "$dir/pg" is stopped and the directory is removed.
bench_workdir() {
  dir=$(mktemp -d)
  chmod 755 "$dir"
  pids=()
  trap bench_cleanup EXIT
}
bench_cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [[ -f $dir/pg/data/postmaster.pid ]] && pg_cluster_stop "$dir/pg"
  rm -rf "$dir"
}

# bench_mock: the mock provider the cells load (1 worker, 20 tokens per answer), logging to
# $dir/mock.log, added to $pids; sets mock_port.
bench_mock() {
  "$TURNPIKE" mock-provider --listen 127.0.0.1:0 --workers 1 --tokens 20 >"$dir/mock.log" 2>&1 &
  pids+=($!)
  mock_port=$(port_of "$dir/mock.log" "mock-provider listening on")
}

# bench_models_yaml: the `prices:` and `models:` sections of a cell's gateway config: bench-model,
# priced, served by the mock provider at $mock_port.
bench_models_yaml() {
  cat <<YAML
prices:
  bench-model: {input: 0.15, output: 0.60, max_output_tokens: 4096}
models:
  - name: bench-model
    deployments: [{provider: openai, base_url: "http://127.0.0.1:$mock_port/v1"}]
YAML
}

# bench_tls_cert: a self-signed ECDSA P-256 certificate for localhost and 127.0.0.1, made here:
# $dir/cert.pem and $dir/key.pem.
bench_tls_cert() {
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
    -keyout "$dir/key.pem" -out "$dir/cert.pem" 2>/dev/null
}

# bench_nginx_tls_conf RUN_DIR WORKERS MASTER SERVERS [HTTP_LINES]: writes RUN_DIR/nginx.conf,
# an nginx (worker_processes WORKERS, master_process MASTER: on|off) proxying to the mock at
# $mock_port over keep-alive, with $dir/cert.pem (bench_tls_cert) for the servers that say
# `ssl`. SERVERS: its `server { ... }` lines; HTTP_LINES: more lines for the http block.
bench_nginx_tls_conf() {
  local run=$1
  mkdir -p "$run"
  cat >"$run/nginx.conf" <<NGINX
daemon off;
master_process $3;
worker_processes $2;
pid $run/nginx.pid;
error_log $run/error.log warn;
events { worker_connections 4096; multi_accept on; }
http {
  access_log off;
  client_body_temp_path $run/client_body;
  proxy_temp_path $run/proxy;
  fastcgi_temp_path $run/fastcgi;
  uwsgi_temp_path $run/uwsgi;
  scgi_temp_path $run/scgi;
  keepalive_requests 100000000;
  keepalive_timeout 75s;
  client_body_buffer_size 64k;
  upstream mock { server 127.0.0.1:$mock_port; keepalive 256; keepalive_requests 100000000; }
  proxy_http_version 1.1;
  proxy_set_header Connection "";
  proxy_buffering off;
  proxy_request_buffering off;
  ssl_protocols TLSv1.2 TLSv1.3;
  ssl_certificate $dir/cert.pem;
  ssl_certificate_key $dir/key.pem;
${5:-}
$4
}
NGINX
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

# pg_cluster_start DIR: a throwaway PostgreSQL 15 cluster in DIR (initdb, a free loopback port,
# fsync on; as the postgres user when run as root) with a database `turnpike`; sets pg_port and
# pg_postmaster. pg_cluster_stop DIR stops it. Needs /usr/lib/postgresql/15/bin ($PG_BIN).
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
pg_as() { if [[ $(id -u) == 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi; }
pg_cluster_start() {
  mkdir -p "$1"
  [[ $(id -u) == 0 ]] && chown postgres: "$1"
  pg_as "$PG_BIN/initdb" -D "$1/data" -U turnpike --auth=trust -E UTF8 >/dev/null
  pg_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  pg_as "$PG_BIN/pg_ctl" -D "$1/data" -l "$1/log" \
    -o "-p $pg_port -k $1 -c listen_addresses=127.0.0.1" -w start >/dev/null
  "$PG_BIN/psql" -X -q -h 127.0.0.1 -p "$pg_port" -U turnpike -d postgres -c 'CREATE DATABASE turnpike'
  pg_postmaster=$(head -1 "$1/data/postmaster.pid")
}
pg_cluster_stop() {
  [[ -f $1/data/postmaster.pid ]] && pg_as "$PG_BIN/pg_ctl" -D "$1/data" -m fast -w stop >/dev/null 2>&1
  return 0
}
# pg_cluster_pids: the postmaster and its children now. pg_cluster_reaped_ticks: CPU ticks of
# the children that exited (autovacuum workers...), which are in the postmaster's cutime +
# cstime once reaped (they are gone from /proc).
pg_cluster_pids() { echo "$pg_postmaster" $(pgrep -P "$pg_postmaster" || true); }
pg_cluster_reaped_ticks() { awk '{print $16 + $17}' "/proc/$pg_postmaster/stat"; }
# pg_cluster_ticks: every process of the cluster, live and reaped, in clock ticks.
pg_cluster_ticks() {
  local sum=0 p
  for p in $(pg_cluster_pids); do
    [[ -r /proc/$p/stat ]] && sum=$((sum + $(awk '{print $14 + $15}' "/proc/$p/stat")))
  done
  echo $((sum + $(pg_cluster_reaped_ticks)))
}

# cpu_ticks PID...: utime + stime of each PID and of its direct children (nginx workers).
cpu_ticks() {
  local total=0 pid child stat
  for pid in "$@"; do
    for child in "$pid" $(ps -o pid= --ppid "$pid" 2>/dev/null || true); do
      stat=$(cat "/proc/$child/stat" 2>/dev/null) || continue
      stat=${stat##*) }  # drop "pid (comm) ": the name may contain spaces
      read -r -a f <<<"$stat"
      total=$((total + f[11] + f[12]))  # fields 14 and 15 of proc(5)
    done
  done
  echo "$total"
}

# otel_gateway_config FILE off|http/protobuf|http/json COLLECTOR_PORT MOCK_PORT: the tracing
# benchmarks' gateway (otel-callgrind.sh, otel-cpu.sh) in FILE: 1 worker, governance off, the
# mock provider at MOCK_PORT, and unless `off` OTLP export in that protocol to the collector at
# COLLECTOR_PORT at sampling ratio 1.0.
otel_gateway_config() {
  local telemetry=''
  [[ $2 != off ]] && telemetry="telemetry: {otlp: {endpoint: \"http://127.0.0.1:$3/v1/traces\", protocol: $2, sampling_ratio: 1.0}}"
  cat >"$1" <<YAML
server: {listen: 127.0.0.1:0, workers: 1, access_log: ""}
governance: {enabled: false}
$telemetry
models:
  - name: bench-model
    deployments: [{provider: openai, base_url: "http://127.0.0.1:$4/v1"}]
YAML
}

# free_port: a TCP port free on 127.0.0.1 now.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# bench_nginx_conf WORKERS MOCK_PORT [MASTER]: writes $dir/nginx/nginx.conf from nginx.conf.in,
# proxying to the mock on MOCK_PORT with WORKERS workers (MASTER off: a single process, which
# is then the worker, for callgrind), and prints the port it listens on. Start it with
#   "$NGINX" -p "$dir/nginx" -c "$dir/nginx/nginx.conf" -e "$dir/nginx/error.log"
bench_nginx_conf() {
  local port; port=$(free_port)
  mkdir -p "$dir/nginx"
  sed -e "s#@RUN_DIR@#$dir/nginx#g" -e "s/@WORKERS@/$1/" \
    -e "s/@LISTEN_PORT@/$port/" -e "s/@MOCK_PORT@/$2/" \
    -e "s/@TTFT_LISTEN_PORT@/$(free_port)/" -e "s/@TTFT_MOCK_PORT@/$2/" \
    -e "s/@FIXED_PORT@/$(free_port)/" -e "s/^master_process on;/master_process ${3:-on};/" \
    "$(dirname "${BASH_SOURCE[0]}")/nginx.conf.in" >"$dir/nginx/nginx.conf"
  echo "$port"
}

# wait_listening PORT [SECONDS]: until something accepts on 127.0.0.1:PORT (default 60 s: a
# process under valgrind starts slowly); exits the script if nothing does.
wait_listening() {
  local i
  for ((i = 0; i < ${2:-60} * 10; i++)); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "nothing listens on port $1" >&2
  exit 1
}
