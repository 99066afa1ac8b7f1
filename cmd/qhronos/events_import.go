package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/qhronos/qhronos/client"
)

// maxImportLine bounds one line of an import file: an event over the
// server's body limit is refused anyway, but a line this long is not an
// event file.
const maxImportLine = 16 << 20

// importOptions are the flags of events import.
type importOptions struct {
	batch       int
	concurrency int
	rejects     string
	importID    string
	interval    time.Duration
}

func newEventsImportCmd(a *app) *cobra.Command {
	var o importOptions
	cmd := &cobra.Command{
		Use:   "import FILE.jsonl",
		Short: "Create many events from a JSON Lines file (one event per line; - for stdin)",
		Long: `Creates the events of a JSON Lines file — one JSON object per line, each what
"events create -f" takes — with POST /events/batch, --batch-size events a request
and --concurrency requests at a time. Each batch is sent under an Idempotency-Key
derived from the file's identity (its size, first and last MiB; the first batch
of stdin; or --import-id) and the batch's line and byte range, so running the
same command again after an interrupt replays the batches already done (nothing
is created twice) and creates the rest. Keep --batch-size when resuming.

Events the server refuses are reported on stderr with their line number, field
and error (the first 20; --rejects FILE writes every one as JSON Lines:
{"line", "status", "field", "error", "event"}). The exit code is 1 if any event
was refused or any batch failed.`,
		Example: `  qhronos events import events.jsonl
  qhronos events import events.jsonl --concurrency 8 --rejects rejects.jsonl
  generate-events | qhronos events import - --import-id nightly-2026-11-25
  jq -c .event rejects.jsonl > retry.jsonl   # fix them, then import retry.jsonl`,
		Args: exactArgs("FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.batch < 1 || o.batch > client.MaxBatch {
				return usagef("--batch-size: must be 1 to %d, got %d", client.MaxBatch, o.batch)
			}
			if o.concurrency < 1 || o.concurrency > 64 {
				return usagef("--concurrency: must be 1 to 64, got %d", o.concurrency)
			}
			if o.interval <= 0 {
				return usagef("--progress-interval: must be positive")
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			return a.importEvents(cmd.Context(), c, args[0], o)
		},
	}
	cmd.Flags().IntVar(&o.batch, "batch-size", client.MaxBatch, "events per request (at most 1000)")
	cmd.Flags().IntVar(&o.concurrency, "concurrency", 4, "requests in flight at once")
	cmd.Flags().StringVar(&o.rejects, "rejects", "", "write every refused event, with its line and error, to this JSON Lines file")
	cmd.Flags().StringVar(&o.importID, "import-id", "", "identity of this import in its idempotency keys (default: derived from the file)")
	cmd.Flags().DurationVar(&o.interval, "progress-interval", 5*time.Second, "how often progress is printed when stderr is not a terminal")
	return cmd
}

// importChunk is one batch of an import: its lines, where they sit in the
// file, and the events it carries.
type importChunk struct {
	importID            string // the import's identity, in the chunk's key
	firstLine, lastLine int    // 1-based, inclusive
	startByte, endByte  int64  // [start, end)
	lines               []int  // the line of each event
	events              []json.RawMessage
}

// rejected is one refused event, as the rejects file holds it.
type rejected struct {
	Line   int             `json:"line"`
	Status int             `json:"status"`
	Field  string          `json:"field,omitempty"`
	Error  string          `json:"error"`
	Event  json.RawMessage `json:"event,omitempty"`
}

// importSummary is what events import prints at the end.
type importSummary struct {
	Lines   int     `json:"lines"`
	Created int     `json:"created"`
	Failed  int     `json:"failed"`
	Batches int     `json:"batches"`
	Seconds float64 `json:"seconds"`
	PerSec  float64 `json:"events_per_second"`
}

func (a *app) importEvents(ctx context.Context, c *client.Client, path string, o importOptions) error {
	var in io.Reader = a.stdin
	var size int64 = -1
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return usagef("%s: %v", path, err)
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		size, in = st.Size(), f
		if o.importID == "" {
			if o.importID, err = fileIdentity(f, size); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
		}
	}
	var rejects *json.Encoder
	if o.rejects != "" {
		f, err := os.Create(o.rejects)
		if err != nil {
			return usagef("--rejects: %v", err)
		}
		defer f.Close()
		w := bufio.NewWriter(f)
		defer w.Flush()
		rejects = json.NewEncoder(w)
	}

	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	chunks := make(chan importChunk, o.concurrency)
	var readErr error
	go func() {
		defer close(chunks)
		readErr = readChunks(ctx, in, o, chunks)
	}()

	start := time.Now()
	p := newProgress(a.stderr, size, o.interval)
	var (
		mu       sync.Mutex
		sum      importSummary
		shown    int
		firstErr error
	)
	report := func(r rejected) {
		sum.Failed++
		if shown < 20 {
			msg := r.Error
			if r.Field != "" && !bytes.HasPrefix([]byte(msg), []byte(r.Field)) {
				msg = r.Field + ": " + msg
			}
			p.println(fmt.Sprintf("line %d: %s (HTTP %d)", r.Line, printable(msg), r.Status))
		} else if shown == 20 {
			p.println("… more refused events (see --rejects)")
		}
		shown++
		if rejects != nil {
			_ = rejects.Encode(r)
		}
	}
	var wg sync.WaitGroup
	for range o.concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ch := range chunks {
				results, err := sendChunk(ctx, c, ch)
				mu.Lock()
				sum.Batches++
				if err != nil {
					if firstErr == nil {
						firstErr = fmt.Errorf("lines %d-%d: %s", ch.firstLine, ch.lastLine, describe(err))
						cancel() // stop reading; batches in flight finish
					}
					mu.Unlock()
					continue
				}
				for _, r := range results {
					if r.Status == 201 {
						sum.Created++
						continue
					}
					report(rejected{Line: ch.lines[r.Index], Status: r.Status, Field: str(r.Field), Error: str(r.Error),
						Event: ch.events[r.Index]})
				}
				sum.Lines = max(sum.Lines, ch.lastLine)
				p.update(ch.endByte-ch.startByte, sum.Created+sum.Failed)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	p.done()
	sum.Seconds = time.Since(start).Seconds()
	if sum.Seconds > 0 {
		sum.PerSec = float64(sum.Created) / sum.Seconds
	}
	if readErr != nil && firstErr == nil && !errors.Is(readErr, context.Canceled) {
		firstErr = readErr
	}
	if err := parent.Err(); err != nil && firstErr == nil {
		firstErr = err // interrupted (Ctrl-C) between batches
	}
	if a.output == "json" {
		if err := writeJSON(a.stdout, sum); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(a.stdout, "imported %d events in %.1fs (%.0f/s), %d refused, %d batches\n",
			sum.Created, sum.Seconds, sum.PerSec, sum.Failed, sum.Batches)
	}
	switch {
	case firstErr != nil:
		return fmt.Errorf("import stopped: %w; run the same command again to resume", firstErr)
	case sum.Failed > 0:
		return fmt.Errorf("%d events refused", sum.Failed)
	}
	return nil
}

// sendChunk creates a chunk's events under its idempotency key (a batch an
// earlier run sent answers as it did then).
func sendChunk(ctx context.Context, c *client.Client, ch importChunk) ([]client.BatchResult, error) {
	return c.Events.CreateManyJSON(ctx, ch.events, client.IdempotencyKey(chunkKey(ch)), client.Via("cli"),
		client.ReturnMinimal())
}

// chunkKey is a batch's idempotency key: the import's identity and the
// batch's place in the file. The server checks that a replayed key comes
// with the same body, so an edited batch is refused (409), never mixed up.
func chunkKey(ch importChunk) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00lines %d-%d\x00bytes %d-%d", ch.importID, ch.firstLine, ch.lastLine,
		ch.startByte, ch.endByte))
	return "qhronos-import-" + hex.EncodeToString(sum[:20])
}

// fileIdentity names a file by its size and its first and last MiB: the
// same file resumed keeps it, another file gets another one. It leaves f
// at its start.
func fileIdentity(f *os.File, size int64) (string, error) {
	const part = 1 << 20
	h := sha256.New()
	fmt.Fprintf(h, "size %d\x00", size)
	if _, err := io.Copy(h, io.LimitReader(f, part)); err != nil {
		return "", err
	}
	if size > 2*part {
		if _, err := f.Seek(size-part, io.SeekStart); err != nil {
			return "", err
		}
		if _, err := io.Copy(h, f); err != nil {
			return "", err
		}
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return "", err
	}
	return "file:" + filepath.Base(f.Name()) + ":" + hex.EncodeToString(h.Sum(nil)[:16]), nil
}

// readChunks splits in into batches of o.batch events. Blank lines are
// skipped (they keep their numbers). Without an import id (stdin), the
// first batch's bytes name the import.
func readChunks(ctx context.Context, in io.Reader, o importOptions, out chan<- importChunk) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 1<<20), maxImportLine)
	var (
		line   int
		offset int64
		ch     = importChunk{firstLine: 1}
		first  = sha256.New()
	)
	send := func() error {
		if len(ch.events) == 0 {
			return nil
		}
		if o.importID == "" {
			o.importID = "stdin:" + hex.EncodeToString(first.Sum(nil)[:16])
		}
		ch.importID, ch.lastLine, ch.endByte = o.importID, line, offset
		select {
		case out <- ch:
		case <-ctx.Done():
			return ctx.Err()
		}
		ch = importChunk{firstLine: line + 1, startByte: offset}
		return nil
	}
	for sc.Scan() {
		line++
		raw := sc.Bytes()
		offset += int64(len(raw)) + 1
		if o.importID == "" {
			first.Write(raw)
			first.Write([]byte{'\n'})
		}
		trimmed := bytes.TrimSpace(raw)
		if len(trimmed) == 0 {
			continue
		}
		ev := make(json.RawMessage, len(trimmed))
		copy(ev, trimmed)
		if !json.Valid(ev) {
			// Sent as a string, it gets the server's own refusal (body:
			// must be a JSON object) in its place.
			ev, _ = json.Marshal(string(ev))
		}
		ch.events = append(ch.events, ev)
		ch.lines = append(ch.lines, line)
		if len(ch.events) == o.batch {
			if err := send(); err != nil {
				return err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("line %d: %w", line+1, err)
	}
	return send()
}
