# The operator's preStop hook on a RegionServer container (rollout.strategy DrainAndReload), in the
# RegionServer's own image: bash only (its /dev/tcp), nothing else.
#
# Whoever deletes or evicts the pod (kubectl, a node drain, the autoscaler, a scale-down, the
# operator's own roll), the kubelet runs this before it sends SIGTERM. It holds the stop while this
# RegionServer still serves regions, so that the operator, which sees the pod terminating, moves them
# to where their blocks are cached first. It returns, and the kubelet sends SIGTERM, as soon as:
#   - the server's own /jmx reports no region (drained: HBase then stops with nothing to close), or
#   - its /jmx does not answer or answers no region count (not started, hung, TLS), or
#   - $2 seconds have passed (the operator is down or cannot move them): HBase stops as it would
#     without the hook, closing its regions for the master to reopen elsewhere.
# The kubelet counts the hook against the pod's terminationGracePeriodSeconds, which the operator
# raises by the same bound. HBase refreshes regionCount every hbase.regionserver.metrics.period (5 s
# by default): a drained server stops up to that much later.
#
# $1: the RegionServer's info port. $2: the bound in seconds.
port=${1:-16030}
bound=${2:-90}
regions() {
  local line n=
  exec 3<>"/dev/tcp/127.0.0.1/$port" || return 1
  printf 'GET /jmx?qry=Hadoop:service=HBase,name=RegionServer,sub=Server HTTP/1.0\r\n\r\n' >&3
  while IFS= read -r -t 5 line <&3; do
    case $line in
      *'"regionCount"'*)
        n=${line##*:}
        n=${n//[!0-9]/}
        break
        ;;
    esac
  done
  exec 3<&-
  [ -n "$n" ] && echo "$n"
}
end=$((SECONDS + bound))
while [ "$SECONDS" -lt "$end" ]; do
  n=$(regions 2>/dev/null) || exit 0
  [ "$n" -gt 0 ] || exit 0
  sleep 1
done
