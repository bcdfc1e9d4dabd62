package fluss

import (
	"context"
	"sync"
)

// forEachLeader groups buckets of one table (partition) by their leader
// tablet server and calls send once per leader, all leaders concurrently,
// returning when every call has returned. A bucket whose leader cannot be
// found goes to noLeader instead (called from this goroutine, before any
// send). ListOffsets and Writer share it; each retries the buckets it keeps.
func (c *Client) forEachLeader(ctx context.Context, info *TableInfo, partitionID int64, buckets []int32,
	noLeader func(bucket int32, err error), send func(leader int32, buckets []int32)) {
	byLeader := map[int32][]int32{}
	for _, b := range buckets {
		leader, err := c.leader(ctx, info.Bucket(partitionID, b))
		if err != nil {
			noLeader(b, err)
			continue
		}
		byLeader[leader] = append(byLeader[leader], b)
	}
	sendGroups(byLeader, send)
}

// sendGroups calls send once per group of buckets, all concurrently (a
// single group in this goroutine), and returns when every call has
// returned.
func sendGroups[K comparable](groups map[K][]int32, send func(key K, buckets []int32)) {
	if len(groups) == 1 {
		for k, bs := range groups {
			send(k, bs)
		}
		return
	}
	var wg sync.WaitGroup
	for k, bs := range groups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			send(k, bs)
		}()
	}
	wg.Wait()
}

// forEachLane splits the buckets one leader gets into lanes (bucket mod
// lanes: a bucket always takes the same one) and calls send once per lane
// that has buckets, as sendGroups does. A Fluss server handles the requests
// of one connection one after another, so a writer sends each lane over its
// own connection and the server writes several buckets at once.
func forEachLane(buckets []int32, lanes int, send func(lane int, buckets []int32)) {
	byLane := map[int][]int32{}
	for _, b := range buckets {
		l := int(b) % max(lanes, 1)
		byLane[l] = append(byLane[l], b)
	}
	sendGroups(byLane, send)
}
