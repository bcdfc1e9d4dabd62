// Package iggycmd is the `fluss-iggy iggy` subcommand: look into Apache
// Iggy from the terminal, to see what a pipeline delivered.
//
//	fluss-iggy iggy peek [--address HOST:PORT] [--username U] [--password P] [--protocol auto|0.8|0.9]
//	                     [--stream S] --topic T [--partition N] [--count 10] [--from earliest|latest|latest-N|OFFSET]
//
// peek prints, for each partition of a topic (or one), up to --count
// messages from --from on: offset, id, timestamp, user headers and the
// payload, indented when it is JSON and quoted with escapes otherwise. It
// polls as a single consumer without committing an offset, so it changes
// nothing on the server. It speaks both protocol dialects of package iggy
// (Iggy 0.8 and 0.9), finding the server's unless --protocol pins it.
//
// Wire it into a Benthos CLI with service.CLIOptAddCommand(iggycmd.Command()).
package iggycmd

import (
	"bufio"
	"context"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/fluss-iggy/fluss-iggy/iggy"
)

// Command returns the `iggy` command with its subcommand peek.
func Command() *cli.Command {
	return &cli.Command{
		Name:        "iggy",
		Usage:       "Look into Apache Iggy: print the messages of a topic (peek)",
		Subcommands: []*cli.Command{peekCommand()},
	}
}

// connFlags are the connection flags, with the variables and defaults of
// our configs.
func connFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "address", Usage: "Iggy TCP address (HOST:PORT)", EnvVars: []string{"IGGY_TCP_ADDRESS"}, Value: "127.0.0.1:8090"},
		&cli.StringFlag{Name: "username", Usage: "user to log in as", EnvVars: []string{"IGGY_USERNAME"}, Value: "iggy"},
		&cli.StringFlag{Name: "password", Usage: "password of --username", EnvVars: []string{"IGGY_PASSWORD"}, Value: "iggy"},
		&cli.StringFlag{Name: "protocol", Usage: "protocol dialect: auto (find the server's), 0.8 or 0.9", Value: "auto"},
		&cli.DurationFlag{Name: "timeout", Usage: "bound on connecting and on each request", Value: 10 * time.Second},
	}
}

func peekCommand() *cli.Command {
	return &cli.Command{
		Name:  "peek",
		Usage: "Print messages of a topic: offset, id, headers and payload (JSON indented)",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "stream", Usage: "stream name or numeric id", EnvVars: []string{"IGGY_STREAM"}, Value: "fluss"},
			&cli.StringFlag{Name: "topic", Usage: "topic name or numeric id", Required: true},
			&cli.IntFlag{Name: "partition", Usage: "only this partition (0-based; default: every partition)", Value: -1},
			&cli.IntFlag{Name: "count", Usage: "messages to print per partition", Value: 10},
			&cli.StringFlag{Name: "from", Usage: "where to start in each partition: earliest, latest (the last --count), latest-N (the last N) or an offset", Value: "earliest"},
		}, connFlags()...),
		Action: runPeek,
	}
}

// runPeek is the action of `iggy peek`.
func runPeek(cc *cli.Context) error {
	from, err := parseFrom(cc.String("from"), cc.Int("count"))
	if err != nil {
		return err
	}
	if cc.Int("count") <= 0 {
		return fmt.Errorf("--count %d: want at least 1", cc.Int("count"))
	}
	if cc.Int("partition") < -1 {
		return fmt.Errorf("--partition %d: want a partition number from 0", cc.Int("partition"))
	}
	req := PeekRequest{
		Stream: cc.String("stream"), Topic: cc.String("topic"), Partition: cc.Int("partition"),
		Count: cc.Int("count"), From: from,
	}
	return withConn(cc, func(ctx context.Context, c *iggy.Conn) error {
		w := bufio.NewWriter(cc.App.Writer)
		err := Peek(ctx, c, req, w)
		if ferr := w.Flush(); err == nil {
			err = ferr
		}
		return err
	})
}

// withConn dials the server of cc's flags, runs fn and closes the
// connection.
func withConn(cc *cli.Context, fn func(context.Context, *iggy.Conn) error) error {
	version, err := iggy.ParseVersion(cc.String("protocol"))
	if err != nil {
		return fmt.Errorf("--protocol: %w", err)
	}
	c, err := iggy.Dial(cc.Context, iggy.Options{
		Addr:        cc.String("address"),
		Credentials: iggy.Credentials{Username: cc.String("username"), Password: cc.String("password")},
		Version:     version,
		Timeout:     cc.Duration("timeout"),
	})
	if err != nil {
		return err // it names the address and the user
	}
	defer c.Close()
	return fn(cc.Context, c)
}
