package main

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
)

// receiptLog writes every receipt as a CSV row (delivery_id, event_id,
// attempt, scheduled_at, received_at), so that a run's deliveries can be
// joined with the server's own records afterwards (bench/chaos.sh does, to
// tell a send lost in a killed process from any other duplicate).
type receiptLog struct {
	mu  sync.Mutex
	f   *os.File
	buf *bufio.Writer
	w   *csv.Writer
	err error
}

// receiptColumns is the CSV header.
var receiptColumns = []string{"delivery_id", "event_id", "attempt", "scheduled_at", "received_at"}

func openReceiptLog(path string) (*receiptLog, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--receipts: %w", err)
	}
	buf := bufio.NewWriter(f)
	l := &receiptLog{f: f, buf: buf, w: csv.NewWriter(buf)}
	l.err = l.w.Write(receiptColumns)
	return l, nil
}

// add appends one receipt; the first write error is kept for close.
func (l *receiptLog) add(rc Receipt, attempt int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return
	}
	l.err = l.w.Write([]string{rc.DeliveryID, rc.EventID, strconv.Itoa(attempt),
		rc.ScheduledAt.UTC().Format(time.RFC3339Nano), rc.ReceivedAt.UTC().Format(time.RFC3339Nano)})
}

// close flushes the file and returns the first error met.
func (l *receiptLog) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.w.Flush()
	if l.err == nil {
		l.err = l.w.Error()
	}
	if err := l.buf.Flush(); l.err == nil {
		l.err = err
	}
	if err := l.f.Close(); l.err == nil {
		l.err = err
	}
	if l.err != nil {
		return fmt.Errorf("--receipts: %w", l.err)
	}
	return nil
}
