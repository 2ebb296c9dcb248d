# The operator's cache-map-guard init container: runs before every RegionServer start, in the
# RegionServer's own image (POSIX sh and od only), with the cache volume mounted.
#
# HBase 2.6.x writes its persistent BucketCache map at shutdown as "V2UF", the chunk size
# (8 bytes), the number of chunks (8 bytes, big-endian), then the chunks. With no cached block it
# writes 0 chunks and nothing else (20 bytes), and at the next start it dies reading that file
# (NullPointerException "firstChunk" in BucketCache.retrieveChunkedBackingMap, HBASE-29857): the
# pod crash-loops for good. Exactly that file is removed: it holds no cached block, and without it
# HBase starts with an empty cache ("Persistence file missing"). Any other file is left alone.
#
# $1: hbase.bucketcache.persistent.path. The message for the operator goes to the termination log.
map="$1"
log="${TERMINATION_LOG:-/dev/termination-log}"
[ -f "$map" ] || exit 0
size=$(wc -c < "$map" | tr -d ' ')
head=$(od -An -tx1 -N20 "$map" | tr -d ' \n')
if [ "$size" = 20 ]; then
  case "$head" in
    56325546????????????????0000000000000000)
      rm -f "$map"
      msg="removed the empty BucketCache persistence map $map (20 bytes, 0 cached blocks) that HBase 2.6 cannot read at start (HBASE-29857); the RegionServer starts with an empty L2"
      echo "cache-map-guard: $msg"
      { echo "$msg" > "$log"; } 2>/dev/null || true
      exit 0
      ;;
  esac
fi
echo "cache-map-guard: $map ($size bytes) kept"
