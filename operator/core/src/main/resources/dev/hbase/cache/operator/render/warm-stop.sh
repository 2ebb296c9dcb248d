# The operator's preStop hook on a RegionServer container (rollout.strategy DrainAndReload), in the
# RegionServer's own image: bash only (its /dev/tcp), nothing else.
#
# Whoever deletes or evicts the pod (kubectl, a node drain, the autoscaler, a scale-down, the
# operator's own roll), the kubelet runs this before it sends SIGTERM. It holds the stop while this
# RegionServer still serves regions and their count is falling, so that the operator, which sees the
# pod terminating, moves them to where their blocks are cached first. It returns, and the kubelet
# sends SIGTERM, as soon as:
#   - the server's own /jmx reports no region (drained: HBase then stops with nothing to close), or
#   - its info port refuses the connection (not started, stopped), or
#   - its region count has not fallen for $3 seconds (at the start: no drain began, the operator is
#     down or manages this StatefulSet no more; later: the moves are stuck); an answer without a
#     count (slow, hung, TLS) counts as no fall, or
#   - $2 seconds have passed.
# Then HBase stops as it would without the hook, closing what it still holds for the master to
# reopen elsewhere. The kubelet counts the hook against the pod's terminationGracePeriodSeconds,
# which the operator raises by $2. HBase refreshes regionCount every hbase.regionserver.metrics.period
# (5 s by default): a drained server stops up to that much later, and $3 must span a few refreshes.
#
# The hook knows no deadline but its own: the kubelet tells a container nothing of the grace period
# a stop was given (a shorter one than the pod's, from kubectl delete --grace-period, an eviction,
# a node's shutdown). It keeps exactly to $2: every read of /jmx is cut at the time left, so the
# grace period the operator renders ($2 plus HBase's own time) leaves HBase its own. A stop given
# less, the operator sees (the pod's deletionTimestamp, or a DisruptionTarget condition of the
# kubelet's): it stops the RegionServer through HBase in time, which ends this hook (its port
# refuses).
#
# $1: the RegionServer's info port. $2: the bound in seconds. $3: the stall bound in seconds.
port=${1:-16030}
bound=${2:-90}
stall=${3:-20}
start=$SECONDS
# seconds left of the bound
left() { echo $((bound - (SECONDS - start))); }
# prints the region count, waiting at most $1 seconds for it; status 1: the port refuses the
# connection; 2: no count in the answer (in time)
regions() {
  local line n= end=$((SECONDS + $1)) t
  exec 3<>"/dev/tcp/127.0.0.1/$port" || return 1
  printf 'GET /jmx?qry=Hadoop:service=HBase,name=RegionServer,sub=Server HTTP/1.0\r\n\r\n' >&3
  while t=$((end - SECONDS)) && [ "$t" -gt 0 ] && IFS= read -r -t "$t" line <&3; do
    case $line in
      *'"regionCount"'*)
        n=${line##*:}
        n=${n//[!0-9]/}
        break
        ;;
    esac
  done
  exec 3<&-
  [ -n "$n" ] || return 2
  echo "$n"
}
fell=$SECONDS
last=
while [ "$(left)" -gt 0 ] && [ $((SECONDS - fell)) -lt "$stall" ]; do
  wait=$(left)
  [ "$wait" -le 5 ] || wait=5
  n=$(regions "$wait" 2>/dev/null)
  case $? in
    1) exit 0 ;;
    0)
      [ "$n" -gt 0 ] || exit 0
      if [ -n "$last" ] && [ "$n" -lt "$last" ]; then
        fell=$SECONDS
      fi
      last=$n
      ;;
  esac
  [ "$(left)" -gt 0 ] || break
  sleep 1
done
