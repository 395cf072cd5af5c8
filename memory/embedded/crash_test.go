package embedded_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/testchild"
	"github.com/ordo-run/ordo/memory/embedded"
)

// crashEnv tells a re-executed test binary to be the writer that gets killed.
const crashEnv = "ORDO_EMBEDDED_CRASH_CHILD"

const crashRuns = 6

func crashID(i int) string { return fmt.Sprintf("crash-%d", i) }

// crashRun is checkpoint seq of run id: every part is derived from seq, so
// a reader can tell a whole checkpoint from a torn one. The blob spans
// several pages, so a write is many page writes.
func crashRun(id string, seq int64) *contracts.Run {
	blob := strings.Repeat(fmt.Sprintf("%s/%d;", id, seq), 1500)
	sum := sha256.Sum256([]byte(blob))
	run := &contracts.Run{ID: id, Goal: fmt.Sprintf("seq %d", seq), Status: contracts.RunRunning, Seq: seq,
		CreatedAt: time.Unix(0, 0).UTC(), UpdatedAt: time.Unix(seq, 0).UTC(),
		State: map[string]json.RawMessage{
			"blob": json.RawMessage(strconv.Quote(blob)),
			"sum":  json.RawMessage(strconv.Quote(hex.EncodeToString(sum[:]))),
		}}
	for i := range seq {
		run.Steps = append(run.Steps, contracts.StepRecord{ActionID: fmt.Sprintf("a%d", i), Status: contracts.StepSucceeded})
	}
	return run
}

// TestCrashChild is the writer: it is only run re-executed by
// TestCrashKeepsCommittedCheckpoints, and saves until killed, reporting
// each committed checkpoint on stdout.
func TestCrashChild(t *testing.T) {
	path := os.Getenv(crashEnv)
	if path == "" {
		t.Skip("helper process for TestCrashKeepsCommittedCheckpoints")
	}
	s, err := embedded.Open(path)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	ctx := context.Background()
	seqs := make([]int64, crashRuns)
	for i := range crashRuns {
		if run, err := s.Load(ctx, crashID(i)); err == nil {
			seqs[i] = run.Seq
		}
	}
	for n := 0; ; n++ {
		i := n % crashRuns
		seqs[i]++
		if err := s.Save(ctx, crashRun(crashID(i), seqs[i])); err != nil {
			fmt.Println("error", err)
			os.Exit(2)
		}
		fmt.Printf("saved %s %d\n", crashID(i), seqs[i])
	}
}

// TestCrashKeepsCommittedCheckpoints kills a writer with SIGKILL in the
// middle of its save loop, several times over one file, and checks after
// each kill that the file opens and every run loads whole at its last
// committed sequence (or the one after, if the kill fell between commit
// and report).
func TestCrashKeepsCommittedCheckpoints(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ordo.db")
	rng := rand.New(rand.NewPCG(5, 8))
	committed := map[string]int64{}
	for round := range 4 {
		kill := 20 + rng.IntN(60)
		cmd, sc := testchild.Start(t, "TestCrashChild", crashEnv+"="+path)
		for seen := 0; seen < kill && sc.Scan(); seen++ {
			record(t, cmd, sc.Text(), committed)
		}
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		for sc.Scan() { // reports already in the pipe are commits too
			record(t, cmd, sc.Text(), committed)
		}
		cmd.Wait()
		if len(committed) == 0 {
			t.Fatal("child committed nothing")
		}
		verifyAfterCrash(t, path, committed, round)
	}
}

func record(t *testing.T, cmd *exec.Cmd, line string, committed map[string]int64) {
	var id string
	var seq int64
	if _, err := fmt.Sscanf(line, "saved %s %d", &id, &seq); err != nil {
		cmd.Process.Kill()
		t.Fatalf("child said %q", line)
	}
	committed[id] = seq
}

func verifyAfterCrash(t *testing.T, path string, committed map[string]int64, round int) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	var check string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("round %d: integrity_check %q %v", round, check, err)
	}
	db.Close()
	s, err := embedded.Open(path)
	if err != nil {
		t.Fatalf("round %d: reopen after kill: %v", round, err)
	}
	defer s.Close()
	for id, last := range committed {
		run, err := s.Load(context.Background(), id)
		if err != nil {
			t.Fatalf("round %d: load %s: %v", round, id, err)
		}
		if run.Seq != last && run.Seq != last+1 {
			t.Fatalf("round %d: %s at seq %d, last committed %d", round, id, run.Seq, last)
		}
		want := crashRun(id, run.Seq)
		if run.Goal != want.Goal || len(run.Steps) != int(run.Seq) || string(run.State["sum"]) != string(want.State["sum"]) ||
			string(run.State["blob"]) != string(want.State["blob"]) {
			t.Fatalf("round %d: %s seq %d is not the checkpoint that was written", round, id, run.Seq)
		}
		committed[id] = run.Seq
	}
}
