package postgres_test

import (
	"testing"

	"github.com/ordo-run/ordo/memory/storetest"
)

func TestRequests(t *testing.T) {
	storetest.Requests(t, openTest(t), nil)
}
