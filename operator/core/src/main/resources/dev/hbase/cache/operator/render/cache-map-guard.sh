# The operator's cache-map-guard: runs in the RegionServer's own image (POSIX sh, od, wc, tr and rm
# only), with the cache volume mounted, before HBase reads its BucketCache persistence map: as the
# pod's init container (every pod start) and as the RegionServer container's postStart hook (every
# start of the container, also a restart in place after an OOM kill or a crash, which runs no init
# container; the JVM takes seconds to reach the map, and should it win, the crash it dies of is its
# last, the map being gone by then).
#
# HBase 2.6.4 writes the map (BucketProtoUtils.serializeAsPB) as "V2UF", the chunk size (8 bytes),
# the number of chunks N (8 bytes, big-endian), then the chunks, each a length-delimited protobuf
# message (a varint length, then that many bytes); the first chunk is a BucketCacheEntry, the
# others BackingMaps. At start (BucketCache.retrieveChunkedBackingMap) it reads max(N, 1) chunks;
# the old format, "PBUF", has one. A file that ends where a chunk should begin makes it read a null
# chunk and die (NullPointerException, HBASE-29857): the pod crash-loops for good. HBase writes
# such a file itself: 20 bytes with N = 0 when its L2 holds no block, and fewer chunks than N when
# blocks are evicted while it writes (it counts the chunks before it writes them). A file that ends
# inside a chunk, or is not a map at all (zero-filled), HBase drops at start (IOException) and
# starts cold without a word.
#
# The guard walks the chunks the way HBase reads them and removes a map that would not be restored
# (no cached block can be had from it either way), so that HBase starts with an empty L2
# ("Persistence file missing"); a complete map is left alone, whatever its chunks hold (HBase checks
# them). A full disk does not damage the map (HBase keeps the last complete one), but leaves the
# temporary file of each failed write beside it: those go. What it removed and why goes to the termination log ($2, default $TERMINATION_LOG, else
# /dev/termination-log), first word the operator's reason: EmptyCacheMapRemoved,
# TruncatedCacheMapRemoved or UnreadableCacheMapRemoved. It always exits 0.
#
# $1: hbase.bucketcache.persistent.path. $2: the termination log.
map="$1"
log="${2:-${TERMINATION_LOG:-/dev/termination-log}}"
# HBase writes the map to "<path><milliseconds>" and renames it only once written in full: a file
# left by that name is a write that failed (a full disk) or was killed, which HBase never reads
for t in "$map"[0-9]*; do
  case "${t#"$map"}" in
    *[!0-9]*) continue ;;
  esac
  [ -f "$t" ] || continue
  echo "cache-map-guard: removed $t ($(wc -c < "$t" | tr -d ' ') bytes), left by a map write that did not finish"
  rm -f "$t"
done
[ -f "$map" ] || exit 0
size=$(wc -c < "$map" | tr -d ' ')
# $2 bytes at offset $1, as unsigned decimals
bytes() { od -An -tu1 -j "$1" -N "$2" "$map" 2>/dev/null; }

reason=
why=
# walks $2 length-delimited messages from offset $1; sets reason and why when the file ends first
walk() {
  off=$1
  i=0
  while [ "$i" -lt "$2" ]; do
    if [ "$off" -ge "$size" ]; then
      reason=TruncatedCacheMapRemoved
      if [ "$i" = 0 ]; then
        why="it ends after its header, before chunk 1 of $2"
      else
        why="it ends after chunk $i of $2, at byte $off"
      fi
      why="$why: HBase 2.6 dies reading it (HBASE-29857)"
      return
    fi
    len=0
    bits=0
    n=0
    ended=
    for b in $(bytes "$off" 10); do
      n=$((n + 1))
      # protobuf keeps the low 32 bits of the length: 5 bytes of 7
      [ "$bits" -lt 35 ] && len=$((len + ((b & 127) << bits)))
      bits=$((bits + 7))
      if [ "$b" -lt 128 ]; then
        ended=1
        break
      fi
    done
    if [ -z "$ended" ]; then
      reason=TruncatedCacheMapRemoved
      why="the length of chunk $((i + 1)) of $2 at byte $off is cut short: HBase would drop the map"
      return
    fi
    off=$((off + n + len))
    i=$((i + 1))
    if [ "$off" -gt "$size" ]; then
      reason=TruncatedCacheMapRemoved
      why="chunk $i of $2 would end at byte $off: HBase would drop the map"
      return
    fi
  done
}

magic=$(od -An -tx1 -N4 "$map" 2>/dev/null | tr -d ' \n')
case "$magic" in
  56325546)
    if [ "$size" -lt 20 ]; then
      reason=TruncatedCacheMapRemoved
      why="it ends inside its 20-byte header: HBase would drop the map"
    else
      # the number of chunks, a signed long: HBase reads one chunk when it is below 1
      chunks=0
      first=
      for b in $(bytes 12 8); do
        [ -n "$first" ] || first=$b
        [ "$first" -ge 128 ] || chunks=$((chunks * 256 + b))
      done
      if [ "$chunks" = 0 ] && [ "$size" = 20 ]; then
        reason=EmptyCacheMapRemoved
        why="0 cached blocks: HBase 2.6 dies reading it (HBASE-29857)"
      else
        [ "$chunks" -ge 1 ] || chunks=1
        walk 20 "$chunks"
      fi
    fi
    ;;
  50425546) walk 4 1 ;;
  *)
    reason=UnreadableCacheMapRemoved
    why="it does not begin with a map's magic (V2UF, PBUF): HBase would drop it"
    ;;
esac

if [ -z "$reason" ]; then
  echo "cache-map-guard: $map ($size bytes) kept"
  exit 0
fi
rm -f "$map"
if [ -e "$map" ]; then
  echo "cache-map-guard: could not remove $map ($size bytes): $why" >&2
  exit 0
fi
case "$reason" in
  Empty*) what=empty ;;
  Truncated*) what=truncated ;;
  *) what=unreadable ;;
esac
msg="$reason: removed the $what BucketCache persistence map $map ($size bytes): $why; the RegionServer starts with an empty L2"
echo "cache-map-guard: $msg"
{ echo "$msg" > "$log"; } 2>/dev/null || true
exit 0
