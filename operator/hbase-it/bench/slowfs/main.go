// slowfs mounts a directory again (a FUSE loopback) and makes every read of a file opened
// read-only wait a fixed latency, uncached: the storage of the restart benchmark, where a block
// cache miss costs what it costs on a remote store (HDFS, S3) instead of a page cache copy.
//
//	slowfs -latency 10ms BACKING_DIR MOUNTPOINT
//
// Files opened read-only get FOPEN_DIRECT_IO: the kernel sends each read to this process (no page
// cache, no read-ahead), which sleeps the latency before reading the backing file. Writes, and
// reads of files opened for writing, pass through at local speed (loading a table stays fast).
// Every read request and its bytes are counted; SIGUSR1 prints the counts, and they are printed
// at unmount. Unmount with `umount MOUNTPOINT` (or SIGTERM/SIGINT to this process).
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

var (
	latency   time.Duration
	reads     atomic.Int64
	readBytes atomic.Int64
)

// node is the loopback node with Open replaced.
type node struct {
	fs.LoopbackNode
}

var _ = (fs.NodeOpener)((*node)(nil))

func (n *node) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	fh, fuseFlags, errno := n.LoopbackNode.Open(ctx, flags)
	if errno != 0 || flags&syscall.O_ACCMODE != syscall.O_RDONLY {
		return fh, fuseFlags, errno
	}
	lf, ok := fh.(*fs.LoopbackFile)
	if !ok {
		return fh, fuseFlags, errno
	}
	return &slowFile{lf}, fuseFlags | fuse.FOPEN_DIRECT_IO, 0
}

// slowFile is a read-only loopback file whose reads wait the latency first.
type slowFile struct {
	*fs.LoopbackFile
}

func (f *slowFile) Read(ctx context.Context, buf []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	time.Sleep(latency)
	res, errno := f.LoopbackFile.Read(ctx, buf, off)
	reads.Add(1)
	readBytes.Add(int64(len(buf)))
	return res, errno
}

func newNode(root *fs.LoopbackRoot, parent *fs.Inode, name string, st *syscall.Stat_t) fs.InodeEmbedder {
	return &node{fs.LoopbackNode{RootData: root}}
}

func counts() string {
	return fmt.Sprintf("slowfs: %d reads, %d bytes requested, latency %s", reads.Load(), readBytes.Load(), latency)
}

func main() {
	flag.DurationVar(&latency, "latency", 10*time.Millisecond, "wait before each read of a file opened read-only")
	flag.Parse()
	if flag.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: slowfs [-latency 10ms] BACKING_DIR MOUNTPOINT")
		os.Exit(2)
	}
	backing, mnt := flag.Arg(0), flag.Arg(1)
	var st syscall.Stat_t
	if err := syscall.Stat(backing, &st); err != nil {
		log.Fatalf("slowfs: %s: %v", backing, err)
	}
	root := &fs.LoopbackRoot{Path: backing, Dev: uint64(st.Dev), NewNode: newNode}
	root.RootNode = newNode(root, nil, "", &st)
	server, err := fs.Mount(mnt, root.RootNode, &fs.Options{
		MountOptions: fuse.MountOptions{
			FsName:      "slowfs",
			Name:        "slowfs",
			AllowOther:  true,
			DirectMount: true, // as root: mount(2) itself, no fusermount needed
		},
	})
	if err != nil {
		log.Fatalf("slowfs: mount %s: %v", mnt, err)
	}
	fmt.Printf("slowfs: %s mounted on %s, reads wait %s\n", backing, mnt, latency)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGUSR1, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		for s := range sigs {
			if s == syscall.SIGUSR1 {
				fmt.Println(counts())
				continue
			}
			if err := server.Unmount(); err != nil {
				log.Printf("slowfs: unmount %s: %v", mnt, err)
			}
		}
	}()
	server.Wait()
	fmt.Println(counts())
}
