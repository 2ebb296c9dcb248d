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
# $1: the RegionServer's info port. $2: the bound in seconds. $3: the stall bound in seconds.
port=${1:-16030}
bound=${2:-90}
stall=${3:-20}
# prints the region count; status 1: the port refuses the connection; 2: no count in the answer
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
  [ -n "$n" ] || return 2
  echo "$n"
}
start=$SECONDS
fell=$SECONDS
last=
while [ $((SECONDS - start)) -lt "$bound" ] && [ $((SECONDS - fell)) -lt "$stall" ]; do
  n=$(regions 2>/dev/null)
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
  sleep 1
done
