// Command iggyserver runs the in-process Iggy test server (internal/iggytest)
// on its own, and looks at what an Iggy server holds. `make demo` and the
// benchmarks use it when no real Iggy server is at hand.
//
//	iggyserver serve [-addr 127.0.0.1:8090] [-version 0.8|0.9] [-max-per-partition N]
//	                 [-messages-required-to-save N] [-owner-pid PID]
//	iggyserver ping  [-addr A] [-username U] [-password P] [-timeout 2s]
//	iggyserver peek  [-addr A] [-username U] [-password P] -stream S [-topic T] [-n 3]
//
// serve prints IGGY_TCP_ADDRESS=HOST:PORT as its first line once it listens
// and runs until SIGINT or SIGTERM (or until process -owner-pid is gone). It
// speaks the wire protocol of Iggy 0.8 (the default) or 0.9 (-version). Its
// users are iggy/iggy; everything is kept in memory. With
// -messages-required-to-save N accepted messages stay unsaved until N wait
// in a partition (or a flush); SIGUSR1 then simulates a crash and restart
// of the server (kill -9, start again: the unsaved messages are lost, the
// connections cut, the port the same), SIGUSR2 a clean restart.
//
// ping exits 0 when an Iggy server answers at the address and the login
// works. peek prints, for every topic of a stream (or one topic), its
// message count per partition and its first n messages with id, headers and
// payload.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/fluss-iggy/fluss-iggy/iggy"
	"github.com/fluss-iggy/fluss-iggy/internal/e2e"
	"github.com/fluss-iggy/fluss-iggy/internal/iggytest"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = serve(os.Args[2:])
	case "ping":
		err = ping(os.Args[2:])
	case "peek":
		err = peek(os.Args[2:])
	case "-h", "-help", "--help", "help":
		usage()
	default:
		fmt.Fprintf(os.Stderr, "iggyserver: unknown command %q\n", os.Args[1])
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "iggyserver:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprint(os.Stderr, `usage:
  iggyserver serve [-addr 127.0.0.1:8090] [-version 0.8|0.9] [-max-per-partition N]
                   [-messages-required-to-save N] [-owner-pid PID]
  iggyserver ping  [-addr A] [-username U] [-password P] [-timeout 2s]
  iggyserver peek  [-addr A] [-username U] [-password P] -stream S [-topic T] [-n 3]
`)
	os.Exit(2)
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

type conn struct{ addr, user, pass *string }

func connFlags(fs *flag.FlagSet) conn {
	return conn{
		addr: fs.String("addr", envOr("IGGY_TCP_ADDRESS", "127.0.0.1:8090"), "Iggy TCP address (default $IGGY_TCP_ADDRESS)"),
		user: fs.String("username", envOr("IGGY_USERNAME", "iggy"), "user (default $IGGY_USERNAME or iggy)"),
		pass: fs.String("password", envOr("IGGY_PASSWORD", "iggy"), "password (default $IGGY_PASSWORD or iggy)"),
	}
}

func serve(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:8090", "listen address (port 0: a free port)")
	version := fs.String("version", "0.8", "Iggy wire protocol to speak: 0.8 or 0.9")
	maxPer := fs.Int("max-per-partition", 0, "keep only this many newest messages per partition (0: all)")
	toSave := fs.Int("messages-required-to-save", 0, "keep messages unsaved until this many wait in a partition (0: save at once)")
	owner := fs.Int("owner-pid", 0, "exit when this process is gone")
	_ = fs.Parse(args)
	v, err := iggytest.ParseVersion(*version)
	if err != nil || v == iggytest.Version010 {
		return fmt.Errorf("-version %q: want 0.8 or 0.9", *version)
	}
	srv, err := iggytest.Start(iggytest.Options{
		Addr: *addr, Version: v, MaxMessagesPerPartition: *maxPer,
		MessagesRequiredToSave: *toSave, GracefulStop: true,
	})
	if err != nil {
		return err
	}
	fmt.Printf("IGGY_TCP_ADDRESS=%s\n", srv.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if *owner > 0 {
		go func() {
			for ctx.Err() == nil {
				if err := syscall.Kill(*owner, 0); errors.Is(err, syscall.ESRCH) {
					stop()
					return
				}
				time.Sleep(500 * time.Millisecond)
			}
		}()
	}
	restarts := make(chan os.Signal, 1)
	signal.Notify(restarts, syscall.SIGUSR1, syscall.SIGUSR2)
	defer signal.Stop(restarts)
	for {
		select {
		case <-ctx.Done():
			return srv.Close()
		case sig := <-restarts:
			if err := restart(srv, sig == syscall.SIGUSR1); err != nil {
				return err
			}
		}
	}
}

// restart stops the server, as a crash (unsaved messages lost) or cleanly,
// and starts it again on the same port.
func restart(srv *iggytest.Server, crash bool) error {
	stop, what := srv.Stop, "restarted"
	if crash {
		stop, what = srv.Crash, "crashed and restarted"
	}
	if err := stop(); err != nil {
		return err
	}
	if err := srv.Resume(); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "iggyserver: %s on %s\n", what, srv.Addr())
	return nil
}

func ping(args []string) error {
	fs := flag.NewFlagSet("ping", flag.ExitOnError)
	c := connFlags(fs)
	timeout := fs.Duration("timeout", 2*time.Second, "give up after this long")
	_ = fs.Parse(args)
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	cl, err := iggy.Dial(ctx, iggy.Options{Addr: *c.addr, Timeout: *timeout,
		Credentials: iggy.Credentials{Username: *c.user, Password: *c.pass}})
	if err != nil {
		return err
	}
	defer cl.Close()
	if info := cl.Info(); info.Server != "" {
		fmt.Printf("Iggy %s at %s answers (server %s)\n", info.Version, *c.addr, info.Server)
	} else {
		fmt.Printf("Iggy %s at %s answers\n", info.Version, *c.addr)
	}
	return nil
}

func peek(args []string) error {
	fs := flag.NewFlagSet("peek", flag.ExitOnError)
	c := connFlags(fs)
	stream := fs.String("stream", envOr("IGGY_STREAM", "fluss"), "stream (default $IGGY_STREAM or fluss)")
	topic := fs.String("topic", "", "only this topic")
	n := fs.Int("n", 3, "messages to print per topic")
	_ = fs.Parse(args)
	r, err := e2e.NewClientReader(*c.addr, *c.user, *c.pass)
	if err != nil {
		return err
	}
	defer r.Close()
	var topics []string
	if *topic != "" {
		topics = []string{*topic}
	} else {
		ts, err := r.Topics(*stream)
		if err != nil {
			return err
		}
		for _, t := range ts {
			topics = append(topics, t.Name)
		}
	}
	if len(topics) == 0 {
		fmt.Printf("stream %q: no topics\n", *stream)
		return nil
	}
	for _, t := range topics {
		counts, err := r.Counts(*stream, t)
		if err != nil {
			return err
		}
		ids := make([]int, 0, len(counts))
		for p := range counts {
			ids = append(ids, int(p))
		}
		sort.Ints(ids)
		var parts []string
		for _, p := range ids {
			parts = append(parts, fmt.Sprintf("p%d=%d", p, counts[uint32(p)]))
		}
		fmt.Printf("stream %q topic %q: %d messages (%s)\n", *stream, t, e2e.TotalCount(counts), strings.Join(parts, " "))
		if *n <= 0 {
			continue
		}
		msgs, err := r.Messages(*stream, t)
		if err != nil {
			return err
		}
		for i, m := range msgs {
			if i >= *n {
				break
			}
			fmt.Printf("  partition %d offset %d id %s\n    headers %s\n    payload %s\n",
				m.Partition, m.Offset, e2e.IDHex(m.ID), headerText(m.Headers), truncate(string(m.Payload), 300))
		}
	}
	return nil
}

func headerText(h map[string]iggytest.HeaderField) string {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%s=%s", k, e2e.HeaderValue(h[k]))
	}
	return b.String()
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
