package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// progress shows a long command's progress on stderr: a bar redrawn in
// place on a terminal, a plain line every interval otherwise (logs and CI
// keep readable lines). Its methods are called under the caller's lock.
type progress struct {
	w        io.Writer
	tty      bool
	total    int64 // bytes to read, -1 when unknown (stdin)
	interval time.Duration
	start    time.Time
	shown    time.Time
	bytes    int64
	events   int
	drawn    bool
}

func newProgress(w io.Writer, total int64, interval time.Duration) *progress {
	now := time.Now()
	return &progress{w: w, tty: isTerminal(w), total: total, interval: interval, start: now, shown: now}
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// update adds bytes read and sets the events done so far.
func (p *progress) update(bytes int64, events int) {
	p.bytes += bytes
	p.events = events
	every := p.interval
	if p.tty {
		every = 100 * time.Millisecond
	}
	if time.Since(p.shown) < every {
		return
	}
	p.shown = time.Now()
	p.draw()
}

func (p *progress) draw() {
	elapsed := time.Since(p.start)
	rate := float64(p.events) / max(elapsed.Seconds(), 0.001)
	status := fmt.Sprintf("%d events  %.0f/s  %s", p.events, rate, elapsed.Round(time.Second))
	if p.total > 0 {
		frac := min(float64(p.bytes)/float64(p.total), 1)
		if frac > 0 && frac < 1 {
			eta := time.Duration(float64(elapsed) * (1 - frac) / frac)
			status += "  eta " + eta.Round(time.Second).String()
		}
		if p.tty {
			const width = 30
			n := int(frac * width)
			status = fmt.Sprintf("[%s%s] %3.0f%%  %s", strings.Repeat("=", n), strings.Repeat(" ", width-n), frac*100, status)
		} else {
			status = fmt.Sprintf("%.0f%%  %s", frac*100, status)
		}
	}
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", status)
		p.drawn = true
		return
	}
	fmt.Fprintln(p.w, status)
}

// println prints a line above the bar.
func (p *progress) println(s string) {
	if p.tty && p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
	fmt.Fprintln(p.w, s)
}

// done clears the bar (the command prints its summary).
func (p *progress) done() {
	if p.tty && p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
