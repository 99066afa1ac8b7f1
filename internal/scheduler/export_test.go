package scheduler

// WaitingForShares counts the attempts queued for their tenant's or
// destination's share; each holds the shared stall check by then
// (fairShare.acquire), so a test may advance its clock past it.
func (d *Dispatcher) WaitingForShares() int {
	f := d.share
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, l := range f.waitScope {
		n += l.Len()
	}
	return n
}
