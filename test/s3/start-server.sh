#!/usr/bin/env bash
# A throw-away S3 server for tidemark's tests: Ceph RADOS Gateway 16 ("pacific") on a single-node
# cluster (one ceph-mon, one ceph-osd on memstore, radosgw), everything under one data dir.
# RGW is used because it implements conditional PUTs (If-None-Match: *, If-Match) atomically, which
# the commit protocol depends on; see shared/docs/s3-test-server.md for the measurements.
#
#   start-server.sh start [port] [datadir]   start (or reuse) a server; prints env lines on stdout
#   start-server.sh stop  [datadir]          stop rgw, then osd, then mon (SIGKILL after 5 s each)
#   start-server.sh purge [datadir]          stop and remove the data dir
#   start-server.sh status [datadir]         print the env lines and exit 0 if a server is running there
#
# The data dir defaults to .s3-data at the repository root (where `npm test` looks for a server).
# Without a port, `start` reuses the server running on the data dir, else takes the first free
# pair from 7480 (`npm run s3:start` passes no arguments).
#
# stdout carries only the env lines (`export KEY=VALUE`, shell-quoted), so `eval "$(... start ...)"`
# points both the tests (S3_ENDPOINT) and the tidemark command and library (AWS_ENDPOINT_URL_S3,
# AWS_*) at the server; progress goes to stderr. Settings (environment): S3_ACCESS_KEY, S3_SECRET_KEY, S3_BUCKET
# ("" = create no bucket), MON_PORT (default port+1), OSD_STORE=memstore|bluestore, OSD_SIZE_GB.
set -euo pipefail

MARKER=.s3-rgw-datadir
log() { printf '[s3-server] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
usage() { die "usage: $0 start [port] [datadir] | stop [datadir] | purge [datadir] | status [datadir]"; }

DEFAULT_DATA_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)/.s3-data"
DEFAULT_PORT=7480

abs_dir() { mkdir -p "$1" && (cd "$1" && pwd -P); }

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Prints the pid recorded for daemon $2 under data dir $1 if that process is alive and really is a
# daemon of this data dir (guards against pid reuse).
daemon_pid() {
  local d=$1 name=$2 pid
  [ -f "$d/run/$name.pid" ] || return 1
  pid=$(tr -dc '0-9' <"$d/run/$name.pid")
  [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$d/ceph.conf" || return 1
  echo "$pid"
}

stop_daemon() {
  local d=$1 name=$2 pid i
  pid=$(daemon_pid "$d" "$name") || return 0
  log "stopping $name (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || return 0
  for i in $(seq 1 50); do
    kill -0 "$pid" 2>/dev/null || { rm -f "$d/run/$name.pid"; return 0; }
    sleep 0.1
  done
  log "$name did not exit after 5 s; sending SIGKILL"
  kill -KILL "$pid" 2>/dev/null || true
  for i in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  rm -f "$d/run/$name.pid"
}

# Stop order matters: an OSD killed together with radosgw makes radosgw hang in shutdown, and an
# OSD whose mon is already gone waits before exiting.
stop_all() {
  local d=$1
  stop_daemon "$d" client.rgw
  stop_daemon "$d" osd.0
  stop_daemon "$d" mon.a
}

ensure_installed() {
  local missing=0 b
  for b in ceph-mon ceph-osd radosgw radosgw-admin ceph monmaptool; do
    command -v "$b" >/dev/null 2>&1 || missing=1
  done
  [ "$missing" = 0 ] && return 0
  local sudo=()
  [ "$(id -u)" = 0 ] || sudo=(sudo -n)
  log "installing ceph-mon ceph-osd radosgw ceph-common with apt-get (about 30 s)"
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
    ceph-mon ceph-osd radosgw ceph-common >&2
}

shell_quote() { printf '%q' "$1"; }

print_env() {
  local d=$1
  # shellcheck disable=SC1091
  . "$d/settings"
  # S3_ENDPOINT is what the test suites read; AWS_ENDPOINT_URL_S3 is what tidemark (and the AWS
  # SDK) read: without it the command sends its requests to AWS.
  printf 'export S3_ENDPOINT=%s\n' "http://127.0.0.1:$PORT"
  printf 'export AWS_ENDPOINT_URL_S3=%s\n' "http://127.0.0.1:$PORT"
  printf 'export AWS_ACCESS_KEY_ID=%s\n' "$(shell_quote "$ACCESS_KEY")"
  printf 'export AWS_SECRET_ACCESS_KEY=%s\n' "$(shell_quote "$SECRET_KEY")"
  printf 'export AWS_REGION=us-east-1\n'
  printf 'export S3_BUCKET=%s\n' "$(shell_quote "$BUCKET")"
  printf 'export S3_DATA_DIR=%s\n' "$(shell_quote "$d")"
}

# Signs and sends S3 requests with SigV4 using only node's standard library (no npm packages).
#   s3_request <endpoint> <key> <secret> ping [ms]        -> waits (default 60 s) until the endpoint answers HTTP
#   s3_request <endpoint> <key> <secret> mkbucket <name>  -> PUT /<name> (existing bucket is fine)
s3_request() {
  node --input-type=module - "$@" <<'NODE'
import http from 'node:http';
import crypto from 'node:crypto';
const [endpoint, accessKey, secretKey, op, bucket] = process.argv.slice(2);
const url = new URL(endpoint);
const sha256 = (s) => crypto.createHash('sha256').update(s).digest('hex');
const hmac = (k, s) => crypto.createHmac('sha256', k).update(s).digest();
function send(method, path, signed) {
  const headers = { host: url.host };
  if (signed) {
    const amzDate = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
    const day = amzDate.slice(0, 8);
    const payloadHash = sha256('');
    headers['x-amz-date'] = amzDate;
    headers['x-amz-content-sha256'] = payloadHash;
    const names = Object.keys(headers).sort();
    const canonical = [method, path, '', ...names.map((n) => `${n}:${headers[n]}`), '', names.join(';'), payloadHash].join('\n');
    const scope = `${day}/us-east-1/s3/aws4_request`;
    const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonical)].join('\n');
    let key = hmac(`AWS4${secretKey}`, day);
    for (const part of ['us-east-1', 's3', 'aws4_request']) key = hmac(key, part);
    const signature = crypto.createHmac('sha256', key).update(toSign).digest('hex');
    headers.authorization = `AWS4-HMAC-SHA256 Credential=${accessKey}/${scope}, SignedHeaders=${names.join(';')}, Signature=${signature}`;
  }
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, method, path, headers, timeout: 5000 }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode, body }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}
if (op === 'ping') {
  const deadline = Date.now() + Number(bucket ?? 60_000);
  for (;;) {
    try { await send('GET', '/', false); process.exit(0); } catch (e) {
      if (Date.now() > deadline) { console.error(`no answer from ${endpoint}: ${e.message}`); process.exit(1); }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
} else if (op === 'mkbucket') {
  // A freshly created user can take a moment to become visible to the gateway: retry 403s briefly.
  for (let attempt = 1; ; attempt++) {
    const res = await send('PUT', `/${bucket}`, true);
    if (res.status === 200 || (res.status === 409 && res.body.includes('BucketAlreadyOwnedByYou'))) process.exit(0);
    if (attempt >= 20) { console.error(`PUT /${bucket} failed: HTTP ${res.status} ${res.body}`); process.exit(1); }
    await new Promise((r) => setTimeout(r, 250));
  }
} else {
  console.error(`unknown op ${op}`);
  process.exit(2);
}
NODE
}

write_conf() {
  local d=$1 port=$2 mon=$3 store=$4 size_gb=$5 fsid=$6
  local bytes=$((size_gb * 1024 * 1024 * 1024))
  {
    cat <<EOF
[global]
fsid = $fsid
mon_host = v2:127.0.0.1:$mon
public_addr = 127.0.0.1
ms_bind_ipv6 = false
ms_bind_msgr1 = false
auth_cluster_required = none
auth_service_required = none
auth_client_required = none
ms_mon_client_mode = crc
run_dir = $d/run
admin_socket = $d/run/\$name.asok
pid_file = $d/run/\$name.pid
log_file = $d/log/\$name.log
mon_cluster_log_file = $d/log/ceph.\$channel.log
crash_dir = $d/crash
osd_pool_default_size = 1
osd_pool_default_min_size = 1
osd_pool_default_pg_num = 8
osd_pool_default_pgp_num = 8
osd_pool_default_pg_autoscale_mode = off
osd_crush_chooseleaf_type = 0
mon_allow_pool_size_one = true
mon_warn_on_pool_no_redundancy = false
mon_allow_pool_delete = true
mon_data_avail_warn = 2
mon_data_avail_crit = 1
client_mount_timeout = 30
rados_osd_op_timeout = 60
rados_mon_op_timeout = 60
[mon]
mon_data = $d/mon
paxos_propose_interval = 0.05
paxos_min_wait = 0.01
[osd]
osd_data = $d/osd0
osd_fast_shutdown = true
EOF
    if [ "$store" = bluestore ]; then
      cat <<EOF
osd_objectstore = bluestore
bluestore_block_create = true
bluestore_block_size = $bytes
bluestore_fsck_on_mkfs = false
bluestore_fsck_on_mount = false
osd_memory_target = 1073741824
bluestore_cache_autotune = false
bluestore_cache_size = 134217728
EOF
    else
      cat <<EOF
osd_objectstore = memstore
memstore_device_bytes = $bytes
EOF
    fi
    cat <<EOF
[client.rgw]
rgw_data = $d/rgw
rgw_frontends = beast endpoint=127.0.0.1:$port tcp_nodelay=1
rgw_thread_pool_size = 128
debug_rgw = 1
rgw_gc_obj_min_wait = 60
rgw_gc_processor_period = 60
EOF
  } >"$d/ceph.conf"
}

wipe_dir() {
  find "$1" -mindepth 1 -maxdepth 1 ! -name "$MARKER" ! -name .lock -exec rm -rf {} +
}

# Runs a daemon detached from our stdout so that `$(start-server.sh start ...)` returns at once,
# and without the lock's fd 9 (a daemon holding it would block every later `start` forever).
run_daemon() {
  local d=$1; shift
  "$@" </dev/null >>"$d/log/daemons.out" 2>&1 9>&-
}

fresh_start() {
  local d=$1 port=$2 mon=$3 store=$4 size_gb=$5 access=$6 secret=$7 bucket=$8
  local c=(-c "$d/ceph.conf") fsid osd_uuid i
  wipe_dir "$d"
  mkdir -p "$d/run" "$d/log" "$d/crash" "$d/mon" "$d/osd0" "$d/rgw"
  fsid=$(cat /proc/sys/kernel/random/uuid)
  osd_uuid=$(cat /proc/sys/kernel/random/uuid)
  write_conf "$d" "$port" "$mon" "$store" "$size_gb" "$fsid"

  log "starting ceph-mon on 127.0.0.1:$mon"
  run_daemon "$d" monmaptool --create --fsid "$fsid" --addv a "[v2:127.0.0.1:$mon]" "$d/monmap"
  run_daemon "$d" ceph-mon "${c[@]}" --mkfs -i a --monmap "$d/monmap"
  run_daemon "$d" ceph-mon "${c[@]}" -i a

  log "starting ceph-osd ($store)"
  local id
  id=$(timeout 60 ceph "${c[@]}" osd new "$osd_uuid" 2>>"$d/log/daemons.out" </dev/null) || die "ceph osd new failed (see $d/log)"
  [ "$id" = 0 ] || die "expected osd id 0, got '$id'"
  run_daemon "$d" ceph-osd "${c[@]}" -i 0 --mkfs --osd-uuid "$osd_uuid"
  run_daemon "$d" ceph-osd "${c[@]}" -i 0
  for i in $(seq 1 120); do
    timeout 10 ceph "${c[@]}" osd stat -f json 2>/dev/null </dev/null | grep -q '"num_up_osds":1' && break
    [ "$i" = 120 ] && die "the OSD did not come up within 60 s (see $d/log/osd.0.log)"
    sleep 0.5
  done

  log "starting radosgw on 127.0.0.1:$port"
  run_daemon "$d" radosgw "${c[@]}" -n client.rgw
  s3_request "http://127.0.0.1:$port" x x ping || die "radosgw does not answer (see $d/log/client.rgw.log)"
  run_daemon "$d" timeout 60 radosgw-admin "${c[@]}" -n client.admin user create --uid=tester \
    --display-name=tester --access-key="$access" --secret-key="$secret" \
    || die "radosgw-admin user create failed (see $d/log/daemons.out)"
  if [ -n "$bucket" ]; then
    log "creating bucket $bucket"
    s3_request "http://127.0.0.1:$port" "$access" "$secret" mkbucket "$bucket" || die "could not create bucket $bucket"
  fi
}

cmd_start() {
  [ $# -le 2 ] || usage
  local port=${1:-} d
  d=$(abs_dir "${2:-$DEFAULT_DATA_DIR}")
  if [ -z "$port" ]; then
    if is_running "$d"; then
      log "reusing the server already running on $d"
      print_env "$d"
      return 0
    fi
    port=$DEFAULT_PORT
    while port_in_use "$port" || port_in_use "$((port + 1))"; do
      port=$((port + 2))
      [ "$port" -lt $((DEFAULT_PORT + 100)) ] || die "no free pair of ports from $DEFAULT_PORT to $port: pass one"
    done
  fi
  [[ "$port" =~ ^[0-9]+$ ]] || die "port must be a number, got '$port'"
  local mon=${MON_PORT:-$((port + 1))}
  local access=${S3_ACCESS_KEY:-testaccesskey}
  local secret=${S3_SECRET_KEY:-testsecretkey0123456789}
  local bucket=${S3_BUCKET-test-bucket}
  local store=${OSD_STORE:-memstore}
  local size_gb=${OSD_SIZE_GB:-8}
  case "$store" in memstore | bluestore) ;; *) die "OSD_STORE must be memstore or bluestore, got '$store'" ;; esac

  if [ ! -f "$d/$MARKER" ] && [ -n "$(ls -A "$d")" ]; then
    die "$d is not empty and was not created by this script (no $MARKER); refusing to use it"
  fi
  touch "$d/$MARKER"
  exec 9>"$d/.lock"
  flock -w 300 9 || die "another start on $d holds $d/.lock for more than 300 s"

  local wanted
  wanted=$(printf 'PORT=%q\nMON_PORT=%q\nACCESS_KEY=%q\nSECRET_KEY=%q\nBUCKET=%q\nSTORE=%q\nSIZE_GB=%q\n' \
    "$port" "$mon" "$access" "$secret" "$bucket" "$store" "$size_gb")
  if [ -f "$d/settings" ] && [ "$(cat "$d/settings")" = "$wanted" ] && is_running "$d"; then
    log "reusing the server already running on $d"
    print_env "$d"
    return 0
  fi
  if [ -f "$d/settings" ]; then
    log "stopping the stale or differently configured server on $d"
    stop_all "$d"
  fi
  port_in_use "$port" && die "port $port is already in use"
  port_in_use "$mon" && die "mon port $mon is already in use (set MON_PORT)"
  ensure_installed

  local t0=$SECONDS
  rm -f "$d/settings"
  # `set -e` is ignored inside a tested command, so run the subshell untested and check its status.
  local rc
  set +e
  (set -e; fresh_start "$d" "$port" "$mon" "$store" "$size_gb" "$access" "$secret" "$bucket")
  rc=$?
  set -e
  if [ "$rc" != 0 ]; then
    log "startup failed; stopping what was started (logs kept in $d/log)"
    stop_all "$d"
    exit 1
  fi
  printf '%s\n' "$wanted" >"$d/settings"
  log "ready on http://127.0.0.1:$port after $((SECONDS - t0)) s"
  log "point a shell at it with: eval \"\$(bash $0 status $d)\""
  print_env "$d"
}

# True when all three daemons of data dir $1 are alive and the gateway answers.
is_running() {
  local d=$1
  [ -f "$d/settings" ] && daemon_pid "$d" mon.a >/dev/null && daemon_pid "$d" osd.0 >/dev/null \
    && daemon_pid "$d" client.rgw >/dev/null \
    && (. "$d/settings" && s3_request "http://127.0.0.1:$PORT" x x ping 3000 2>/dev/null)
}

# The data dir argument of status/stop/purge (at most one; default $DEFAULT_DATA_DIR) as an absolute
# path in DATA_DIR; false, with DATA_DIR as given, when there is no such directory.
data_dir_arg() {
  [ $# -le 1 ] || usage
  DATA_DIR=${1:-$DEFAULT_DATA_DIR}
  [ -d "$DATA_DIR" ] || return 1
  DATA_DIR=$(abs_dir "$DATA_DIR")
}

cmd_status() {
  data_dir_arg "$@" || exit 1
  is_running "$DATA_DIR" || exit 1
  print_env "$DATA_DIR"
}

cmd_stop() {
  data_dir_arg "$@" || { log "$DATA_DIR does not exist; nothing to stop"; return 0; }
  local d=$DATA_DIR
  [ -f "$d/$MARKER" ] || die "$d was not created by this script (no $MARKER)"
  stop_all "$d"
  rm -f "$d/settings"
}

cmd_purge() {
  data_dir_arg "$@" || return 0
  local d=$DATA_DIR
  [ -f "$d/$MARKER" ] || die "$d was not created by this script (no $MARKER); refusing to delete it"
  stop_all "$d"
  rm -rf "$d"
  log "removed $d"
}

case "${1:-}" in
  start) shift; cmd_start "$@" ;;
  stop) shift; cmd_stop "$@" ;;
  purge) shift; cmd_purge "$@" ;;
  status) shift; cmd_status "$@" ;;
  *) usage ;;
esac
