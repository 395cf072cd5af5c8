package files

import (
	"encoding/json"

	"github.com/ordo-run/ordo/contracts"
)

// Size limits keep one call from exhausting the plugin's memory.
const (
	defaultMaxBytes = 1 << 20
	maxMaxBytes     = 16 << 20
	maxSearchFile   = 4 << 20
)

func contract(name, desc string, risk contracts.Risk, idempotent bool, tags []string, in, out string, produces map[string]string) contracts.Contract {
	return contracts.Contract{
		Tool:         "files." + name,
		Service:      "files",
		Description:  desc,
		RiskLevel:    risk,
		Tags:         tags,
		InputSchema:  json.RawMessage(in),
		OutputSchema: json.RawMessage(out),
		ProducesMap:  produces,
		TimeoutMS:    20000,
		Idempotent:   idempotent,
		// Every files tool with an effect journals it under the key (journal.go).
		IdempotentWithKey: risk != contracts.RiskRead,
	}
}

var (
	readContract = contract("read",
		"Read a text file under the files root and return its content (base64 if it is not UTF-8).",
		contracts.RiskRead, true, nil,
		`{"type":"object","additionalProperties":false,"required":["path"],"properties":{
			"path":{"type":"string","minLength":1,"description":"file path relative to the files root"},
			"max_bytes":{"type":"integer","minimum":1,"maximum":16777216,"default":1048576,"description":"read at most this many bytes"}}}`,
		`{"type":"object","additionalProperties":false,"required":["path","content","encoding","size","truncated"],"properties":{
			"path":{"type":"string"},"content":{"type":"string"},"encoding":{"enum":["utf-8","base64"]},
			"size":{"type":"integer","minimum":0},"truncated":{"type":"boolean"}}}`,
		map[string]string{"content": "$.content"})

	writeContract = contract("write",
		"Write text (or base64 bytes) to a file under the files root: overwrite (atomic), append, or create_new; parent directories are created.",
		contracts.RiskWrite, false, nil,
		`{"type":"object","additionalProperties":false,"required":["path","content"],"properties":{
			"path":{"type":"string","minLength":1,"description":"file path relative to the files root"},
			"content":{"type":"string"},
			"encoding":{"enum":["utf-8","base64"],"default":"utf-8"},
			"mode":{"enum":["overwrite","append","create_new"],"default":"overwrite"}}}`,
		`{"type":"object","additionalProperties":false,"required":["path","bytes_written","created"],"properties":{
			"path":{"type":"string"},"bytes_written":{"type":"integer","minimum":0},"created":{"type":"boolean"}}}`,
		map[string]string{"file_path": "$.path"})

	listContract = contract("list",
		"List files and directories under a directory of the files root, optionally recursive and filtered by a glob on the name.",
		contracts.RiskRead, true, nil,
		`{"type":"object","additionalProperties":false,"properties":{
			"path":{"type":"string","minLength":1,"default":".","description":"directory relative to the files root"},
			"recursive":{"type":"boolean","default":false},
			"pattern":{"type":"string","description":"glob on the base name, e.g. *.csv"},
			"max_entries":{"type":"integer","minimum":1,"maximum":10000,"default":1000}}}`,
		`{"type":"object","additionalProperties":false,"required":["path","files","truncated"],"properties":{
			"path":{"type":"string"},
			"files":{"type":"array","items":{"type":"object","additionalProperties":false,"required":["path","type","size","modified"],"properties":{
				"path":{"type":"string"},"type":{"enum":["file","dir","symlink","other"]},
				"size":{"type":"integer","minimum":0},"modified":{"type":"string","format":"date-time"}}}},
			"truncated":{"type":"boolean"}}}`,
		map[string]string{"files": "$.files"})

	searchContract = contract("search",
		"Search file names and/or text file contents under the files root for a substring or a regular expression; returns matching paths and lines.",
		contracts.RiskRead, true, nil,
		`{"type":"object","additionalProperties":false,"required":["query"],"properties":{
			"query":{"type":"string","minLength":1,"maxLength":1000},
			"regexp":{"type":"boolean","default":false,"description":"treat query as a Go (RE2) regular expression"},
			"in":{"enum":["names","contents","both"],"default":"both"},
			"path":{"type":"string","minLength":1,"default":".","description":"directory to search, relative to the files root"},
			"case_sensitive":{"type":"boolean","default":false},
			"max_results":{"type":"integer","minimum":1,"maximum":1000,"default":100}}}`,
		`{"type":"object","additionalProperties":false,"required":["matches","truncated","files_scanned"],"properties":{
			"matches":{"type":"array","items":{"type":"object","additionalProperties":false,"required":["path","line","text"],"properties":{
				"path":{"type":"string"},"line":{"type":"integer","minimum":0,"description":"0 for a name match"},"text":{"type":"string"}}}},
			"truncated":{"type":"boolean"},"files_scanned":{"type":"integer","minimum":0}}}`,
		map[string]string{"matches": "$.matches"})

	deleteContract = contract("delete",
		"Delete a file, or a directory (recursive only when asked), under the files root. Irreversible.",
		contracts.RiskDestructive, false, []string{contracts.TagDelete},
		`{"type":"object","additionalProperties":false,"required":["path"],"properties":{
			"path":{"type":"string","minLength":1,"description":"path relative to the files root; the root itself cannot be deleted"},
			"recursive":{"type":"boolean","default":false,"description":"required to delete a non-empty directory"}}}`,
		`{"type":"object","additionalProperties":false,"required":["path","deleted","kind"],"properties":{
			"path":{"type":"string"},"deleted":{"const":true},"kind":{"enum":["file","dir","symlink","other"]}}}`,
		map[string]string{"deleted_path": "$.path"})
)

// Contracts are the contracts Tools serves, known without opening
// anything: what a host lists while the plugin's process starts.
func Contracts() []contracts.Contract {
	return []contracts.Contract{readContract, writeContract, listContract, searchContract, deleteContract}
}
