package main

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
)

// rssEvery is how often the server's resident memory is sampled: often
// enough to catch a drain's peak, which VmHWM confirms at the end.
const rssEvery = 250 * time.Millisecond

// procMemory is the memory part of a Linux /proc/PID/status file, in kB.
type procMemory struct {
	RSSkB int64 // VmRSS: resident now
	HWMkB int64 // VmHWM: highest resident since the process started
}

// parseProcStatus reads VmRSS and VmHWM out of a /proc/PID/status text.
func parseProcStatus(text string) (procMemory, error) {
	var m procMemory
	var haveRSS, haveHWM bool
	for line := range strings.SplitSeq(text, "\n") {
		key, value, ok := strings.Cut(line, ":")
		if !ok || (key != "VmRSS" && key != "VmHWM") {
			continue
		}
		f := strings.Fields(value)
		if len(f) != 2 || f[1] != "kB" {
			return procMemory{}, fmt.Errorf("%s: want \"N kB\", got %q", key, strings.TrimSpace(value))
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || n < 0 {
			return procMemory{}, fmt.Errorf("%s: bad size %q", key, f[0])
		}
		if key == "VmRSS" {
			m.RSSkB, haveRSS = n, true
		} else {
			m.HWMkB, haveHWM = n, true
		}
	}
	if !haveRSS || !haveHWM {
		// A kernel thread or a zombie has no memory lines.
		return procMemory{}, fmt.Errorf("no VmRSS and VmHWM lines")
	}
	return m, nil
}

// readProcMemory reads pid's memory figures.
func readProcMemory(pid int) (procMemory, error) {
	path := fmt.Sprintf("/proc/%d/status", pid)
	b, err := os.ReadFile(path)
	if err != nil {
		return procMemory{}, err
	}
	m, err := parseProcStatus(string(b))
	if err != nil {
		return procMemory{}, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// rssSampler polls a process's resident memory until stopped. The first
// read failure ends the sampling: the process is gone or this is not Linux,
// and the report says so instead of failing the run.
type rssSampler struct {
	pid      int
	done     chan struct{}
	finished chan struct{}
	// Owned by the sampling goroutine until finished is closed.
	samples int
	maxKB   int64
	err     error
}

// serverMemory is the server's memory over the run, in MB of 2^20 bytes.
// A figure that could not be read is left out.
type serverMemory struct {
	PID       int     `json:"pid"`
	Samples   int     `json:"samples"`
	MaxRSSMB  float64 `json:"max_rss_mb,omitempty"`
	EndRSSMB  float64 `json:"end_rss_mb,omitempty"`
	PeakHWMMB float64 `json:"peak_hwm_mb,omitempty"`
	Error     string  `json:"error,omitempty"`
}

// startRSSSampler samples pid now and then every interval.
func startRSSSampler(pid int, every time.Duration) *rssSampler {
	s := &rssSampler{pid: pid, done: make(chan struct{}), finished: make(chan struct{})}
	go func() {
		defer close(s.finished)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for s.sample() {
			select {
			case <-tick.C:
			case <-s.done:
				return
			}
		}
	}()
	return s
}

// sample takes one reading and reports whether sampling may go on.
func (s *rssSampler) sample() bool {
	m, err := readProcMemory(s.pid)
	if err != nil {
		s.err = err
		return false
	}
	s.samples++
	s.maxKB = max(s.maxKB, m.RSSkB)
	return true
}

// stop ends the sampling and takes the final reading: the RSS at the end
// and VmHWM, the kernel's own peak, which no sampling interval can miss.
func (s *rssSampler) stop() *serverMemory {
	close(s.done)
	<-s.finished
	rep := &serverMemory{PID: s.pid}
	if s.err == nil {
		if m, err := readProcMemory(s.pid); err != nil {
			s.err = err
		} else {
			s.samples++
			s.maxKB = max(s.maxKB, m.RSSkB)
			rep.EndRSSMB, rep.PeakHWMMB = kBToMB(m.RSSkB), kBToMB(m.HWMkB)
		}
	}
	rep.Samples, rep.MaxRSSMB = s.samples, kBToMB(s.maxKB)
	if s.err != nil {
		rep.Error = s.err.Error()
	}
	return rep
}

// kBToMB converts kB to MB rounded to a hundredth.
func kBToMB(kb int64) float64 {
	return math.Round(float64(kb)/1024*100) / 100
}

// describe is the report's line for m.
func (m *serverMemory) describe() string {
	switch {
	case m.Samples == 0:
		return fmt.Sprintf("pid %d unreadable: %s (process gone, or not Linux)", m.PID, m.Error)
	case m.Error != "":
		return fmt.Sprintf("max %.1f MB over %d samples, then pid %d unreadable: %s (process gone?)",
			m.MaxRSSMB, m.Samples, m.PID, m.Error)
	default:
		return fmt.Sprintf("max %.1f MB, end %.1f MB, peak (VmHWM) %.1f MB (pid %d, %d samples)",
			m.MaxRSSMB, m.EndRSSMB, m.PeakHWMMB, m.PID, m.Samples)
	}
}
