package model

import "strconv"

// Buckets is how many logical buckets the work is divided into. Every event,
// occurrence and attempt belongs to the bucket of its event for good: the
// low ten bits of the event's id (random in the server's UUIDv7 ids and in
// UUIDv4 ones), so the database computes the same value (the generated
// column `bucket`, migration 0020) without a lookup or a stored mapping.
//
// Buckets are owned in slots of SlotBuckets contiguous buckets: a slot is the
// unit of the ownership lease, small enough in number (Slots) that renewing
// all an instance holds is one short statement, and many enough to balance
// work across dozens of instances.
const (
	Buckets     = 1024
	SlotBuckets = 16
	Slots       = Buckets / SlotBuckets
)

// BucketOf returns the bucket of the work of the event with this id: the low
// ten bits of its last three hex digits. It mirrors qhronos_bucket of the
// migrations; an id that is not hex (never issued by the server) falls in
// bucket 0.
func BucketOf(eventID string) int {
	if len(eventID) < 3 {
		return 0
	}
	v, err := strconv.ParseUint(eventID[len(eventID)-3:], 16, 16)
	if err != nil {
		return 0
	}
	return int(v) & (Buckets - 1)
}

// SlotOf returns the ownership slot that holds a bucket.
func SlotOf(bucket int) int { return bucket / SlotBuckets }
