package fluss

// Location exposes the cached location of a bucket to the external tests
// of this directory (failover_test.go watches a bucket's leader move).
func (c *Client) Location(b TableBucket) (bucketLocation, bool) { return c.location(b) }
