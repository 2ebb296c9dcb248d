#!/usr/bin/env bash
# Runs one HBase 2.6 daemon in the foreground: the image's entrypoint, and what the contract tests
# in operator/hbase-it start on the host, so one script is proven by both.
#
#   entrypoint.sh master|regionserver|zookeeper [args...]   (args default to "start" for master/rs)
#   entrypoint.sh version | classpath | <fully.qualified.ClassName> [args...]
#
# Environment, read the way HBase's own bin/hbase reads it:
#   HBASE_LIB_DIR        jars of the server runtime (default /opt/hbase/lib; hbase-webapps/ beside it;
#                        on the host: images/hbase/target/lib, built by `mvn -f images/hbase/pom.xml package`)
#   HBASE_CONF_DIR       holds hbase-site.xml, put first on the classpath (default /etc/hbase)
#   HBASE_HEAPSIZE       e.g. 4096m or 4g; a plain number means MB. Sets -Xmx and -Xms.
#   HBASE_OFFHEAPSIZE    same units; sets -XX:MaxDirectMemorySize (offheap BucketCache, RPC buffers)
#   HBASE_OPTS           JVM options for every daemon
#   HBASE_MASTER_OPTS / HBASE_REGIONSERVER_OPTS / HBASE_ZOOKEEPER_OPTS   appended for that daemon
#   SERVER_GC_OPTS       appended for the daemons, as bin/hbase does
#   HBASE_DNS_TTL        seconds the JVM caches DNS answers (default 1: a restarted pod has a new IP)
#   HBASE_LOG_DIR        -Dhbase.log.dir (default /tmp); logs go to the console in any case
#   HBASE_LOG4J2_CONF    log4j2 config (default: $HBASE_CONF_DIR/log4j2.properties if present, else
#                        conf/log4j2.properties beside this script)
#   HBASE_ENTRYPOINT_DRY_RUN=1   print the java command line instead of running it
#
# The JVM is exec'd, so it is PID 1 in a container and gets SIGTERM itself: HBase's shutdown hook
# then stops the RegionServer gracefully (closes regions, writes the persistent BucketCache map).
# The persistent cache's checksum shells out to `du`, so the image needs coreutils.
set -euo pipefail

die() { echo "entrypoint.sh: $*" >&2; exit 2; }

# "4096" -> "4096m"; "4g"/"512m"/"1024k" stay (bin/hbase's add_size_suffix, plus k and upper case)
size_with_unit() {
  local v="$1"
  [[ "$v" =~ ^[0-9]+[kKmMgGtT]?$ ]] || die "bad size '$v' (want e.g. 4096, 4096m, 4g)"
  if [[ "$v" =~ ^[0-9]+$ ]]; then echo "${v}m"; else echo "$v"; fi
}

# split a whitespace-separated option string into words (no quoting, like bin/hbase)
append_opts() {
  local -n into="$1"
  local words
  read -r -a words <<<"${2:-}"
  into+=("${words[@]}")
}

script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
lib_dir="${HBASE_LIB_DIR:-/opt/hbase/lib}"
conf_dir="${HBASE_CONF_DIR:-/etc/hbase}"
log_dir="${HBASE_LOG_DIR:-/tmp}"
dns_ttl="${HBASE_DNS_TTL:-1}"

[[ $# -ge 1 ]] || die "usage: entrypoint.sh master|regionserver|zookeeper|version|classpath|CLASS [args...]"
command="$1"
shift
[[ -d "$lib_dir" ]] || die "HBASE_LIB_DIR $lib_dir is not a directory"
compgen -G "$lib_dir/hbase-server-*.jar" >/dev/null || die "no hbase-server jar in $lib_dir"
[[ -d "$conf_dir" ]] || die "HBASE_CONF_DIR $conf_dir is not a directory"

role_opts=""
case "$command" in
  master)
    class=org.apache.hadoop.hbase.master.HMaster
    role_opts="${HBASE_MASTER_OPTS:-}"
    [[ $# -gt 0 ]] || set -- start ;;
  regionserver)
    class=org.apache.hadoop.hbase.regionserver.HRegionServer
    role_opts="${HBASE_REGIONSERVER_OPTS:-}"
    [[ $# -gt 0 ]] || set -- start ;;
  zookeeper)
    class=org.apache.hadoop.hbase.zookeeper.HQuorumPeer
    role_opts="${HBASE_ZOOKEEPER_OPTS:-}" ;;
  version)
    class=org.apache.hadoop.hbase.util.VersionInfo ;;
  classpath)
    class="" ;;
  *.*)
    class="$command" ;;
  *)
    die "unknown command '$command'" ;;
esac

log4j2_conf="${HBASE_LOG4J2_CONF:-}"
if [[ -z "$log4j2_conf" ]]; then
  if [[ -f "$conf_dir/log4j2.properties" ]]; then
    log4j2_conf="$conf_dir/log4j2.properties"
  else
    log4j2_conf="$script_dir/conf/log4j2.properties"
  fi
fi

java_bin="${JAVA_HOME:+$JAVA_HOME/bin/}java"
jvm=(-Dproc_"$command" -XX:+ExitOnOutOfMemoryError)
if [[ -n "${HBASE_HEAPSIZE:-}" ]]; then
  heap="$(size_with_unit "$HBASE_HEAPSIZE")"
  jvm+=("-Xmx$heap" "-Xms$heap")
fi
if [[ -n "${HBASE_OFFHEAPSIZE:-}" ]]; then
  jvm+=("-XX:MaxDirectMemorySize=$(size_with_unit "$HBASE_OFFHEAPSIZE")")
fi
# what HBase's own build passes to JDK 17 (hbase-surefire.jdk17.flags)
jvm+=(
  -Dorg.apache.hbase.thirdparty.io.netty.tryReflectionSetAccessible=true
  --add-modules jdk.unsupported
  --add-opens java.base/java.nio=ALL-UNNAMED
  --add-opens java.base/sun.nio.ch=ALL-UNNAMED
  --add-opens java.base/java.lang=ALL-UNNAMED
  --add-opens java.base/jdk.internal.ref=ALL-UNNAMED
  --add-opens java.base/java.lang.reflect=ALL-UNNAMED
  --add-opens java.base/java.util=ALL-UNNAMED
  --add-opens java.base/java.util.concurrent=ALL-UNNAMED
  --add-exports java.base/jdk.internal.misc=ALL-UNNAMED
  --add-exports java.security.jgss/sun.security.krb5=ALL-UNNAMED
  --add-exports java.base/sun.net.dns=ALL-UNNAMED
  --add-exports java.base/sun.net.util=ALL-UNNAMED
)
jvm+=(
  "-Dsun.net.inetaddr.ttl=$dns_ttl"
  "-Dsun.net.inetaddr.negative.ttl=$dns_ttl"
  "-Dlog4j2.configurationFile=$log4j2_conf"
  "-Dhbase.log.dir=$log_dir"
  "-Dhbase.log.file=hbase-$command.log"
  "-Dhbase.home.dir=${HBASE_HOME:-$(dirname "$lib_dir")}"
  "-Dhbase.root.logger=${HBASE_ROOT_LOGGER:-INFO,console}"
)
case "$command" in
  master|regionserver|zookeeper) append_opts jvm "${SERVER_GC_OPTS:-}" ;;
esac
append_opts jvm "${HBASE_OPTS:-}"
append_opts jvm "$role_opts"

# the web UI's hbase-webapps/ directory sits beside lib/ (as beside HBASE_HOME/lib in the tarball)
# and is found on the classpath; without it the info server, and so /jmx, does not start
home_dir="$(dirname "$lib_dir")"
classpath="$conf_dir"
[[ -d "$home_dir/hbase-webapps" ]] && classpath="$classpath:$home_dir"
classpath="$classpath:$lib_dir/*"

cmd=("$java_bin" "${jvm[@]}" -cp "$classpath" "$class" "$@")
if [[ -z "$class" ]]; then
  echo "$classpath"
  exit 0
fi
if [[ "${HBASE_ENTRYPOINT_DRY_RUN:-}" == "1" ]]; then
  printf '%s\n' "${cmd[@]}"
  exit 0
fi
exec "${cmd[@]}"
