package memory

import (
	"encoding/json"
	"fmt"

	"github.com/ordo-run/ordo/contracts"
)

// EncodeRun serialises run as a checkpoint in the current format
// (contracts.RunFormatVersion). The caller's value is not modified.
func EncodeRun(run *contracts.Run) ([]byte, error) {
	return appendRun(nil, run)
}

// appendRun appends run to b as EncodeRun encodes it, in one buffer sized
// once (contracts.Run.AppendJSON): a run may hold 64 MiB.
func appendRun(b []byte, run *contracts.Run) ([]byte, error) {
	c := *run
	c.FormatVersion = contracts.RunFormatVersion
	data, err := c.AppendJSON(b)
	if err != nil {
		return nil, contracts.Errorf(contracts.CodeInvalidInput, "encode run %q: %w", run.ID, err).With("field", "run")
	}
	return data, nil
}

// DecodeRun reads a checkpoint written in format version, upgrading it one
// version at a time through the registered upgrades, so a checkpoint written
// by an older build still loads. A version this build does not know, or a
// document that is not a run, is refused with contracts.CodeCheckpointFormat.
func DecodeRun(data []byte, version int) (*contracts.Run, error) {
	if version < 0 || version > contracts.RunFormatVersion {
		return nil, contracts.Errorf(contracts.CodeCheckpointFormat,
			"checkpoint format version %d is not readable by this build (reads 0..%d)", version, contracts.RunFormatVersion).
			With("field", "format_version").With("format_version", version)
	}
	if version < contracts.RunFormatVersion {
		var doc map[string]json.RawMessage
		if err := json.Unmarshal(data, &doc); err != nil || doc == nil {
			return nil, formatError(version, fmt.Errorf("not a JSON object: %w", err))
		}
		for v := version; v < contracts.RunFormatVersion; v++ {
			if err := upgrades[v](doc); err != nil {
				return nil, formatError(v, fmt.Errorf("upgrade to version %d: %w", v+1, err))
			}
		}
		var err error
		if data, err = json.Marshal(doc); err != nil {
			return nil, formatError(version, err)
		}
	}
	var run contracts.Run
	if err := json.Unmarshal(data, &run); err != nil {
		return nil, formatError(version, err)
	}
	run.FormatVersion = contracts.RunFormatVersion
	run.MarkLogged()
	return &run, nil
}

func formatError(version int, err error) error {
	return contracts.Errorf(contracts.CodeCheckpointFormat, "checkpoint (format version %d): %w", version, err).
		With("format_version", version)
}

// upgrades[v] rewrites a version v checkpoint, in place, into version v+1.
// Every version below contracts.RunFormatVersion must have one.
var upgrades = []func(doc map[string]json.RawMessage) error{
	0: upgradeV0,
}

// upgradeV0 lifts the pre-release shape (format 0) to format 1. Format 0
// named the run "run_id", kept step records under "history", and held one
// unversioned "plan" instead of the list of plan revisions.
func upgradeV0(doc map[string]json.RawMessage) error {
	rename(doc, "run_id", "id")
	rename(doc, "history", "steps")
	plan, ok := doc["plan"]
	delete(doc, "plan")
	if ok && string(plan) != "null" {
		if _, has := doc["plans"]; has {
			return fmt.Errorf("both \"plan\" and \"plans\" present")
		}
		revs, err := json.Marshal([]map[string]json.RawMessage{{
			"version":    json.RawMessage(`1`),
			"source":     json.RawMessage(`"planner"`),
			"plan":       plan,
			"created_at": orNull(doc["created_at"]),
		}})
		if err != nil {
			return err
		}
		doc["plans"] = revs
	}
	doc["format_version"] = json.RawMessage(`1`)
	return nil
}

func rename(doc map[string]json.RawMessage, from, to string) {
	if v, ok := doc[from]; ok {
		if _, taken := doc[to]; !taken {
			doc[to] = v
		}
		delete(doc, from)
	}
}

func orNull(v json.RawMessage) json.RawMessage {
	if v == nil {
		return json.RawMessage(`null`)
	}
	return v
}

// DecodeEntry reads a log entry written in format version. Entries exist
// from format 1 on; older builds wrote only whole checkpoints (DecodeRun).
func DecodeEntry(data []byte, version int) (*contracts.RunDelta, error) {
	if version != contracts.RunFormatVersion {
		return nil, contracts.Errorf(contracts.CodeCheckpointFormat,
			"log entry format version %d is not readable by this build (reads %d)", version, contracts.RunFormatVersion).
			With("field", "format_version").With("format_version", version)
	}
	var d contracts.RunDelta
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, formatError(version, err)
	}
	if d.Run != nil {
		d.Run.FormatVersion = contracts.RunFormatVersion
	}
	return &d, nil
}

// NeedSnapshot says whether a store keeps a whole snapshot of run beside
// the entry it appends: for a new run, a run that now waits for a person
// or is finished (loaded again soon, or for good), and whenever the entries
// since the last snapshot outweigh it (tailBytes >= snapBytes), which keeps
// snapshot writes within a constant factor of entry writes — per-step cost
// flat in the run's length — and bounds Load to a snapshot and a tail no
// larger than it.
func NeedSnapshot(run *contracts.Run, tailBytes, snapBytes int64) bool {
	return run.Seq == 1 || run.Status.Final() || run.Status == contracts.RunInterrupted || tailBytes >= snapBytes
}
