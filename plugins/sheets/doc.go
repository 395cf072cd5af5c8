// Package sheets is the bundled "sheets" plugin: read cell ranges (A1
// notation) and query records (a small where language) from CSV and TSV
// files under ORDO_SHEETS_ROOT. It is read-only; paths are confined to the
// root by the same safepath code the files plugin uses. The range and where
// parsers are exported so they can be fuzzed and documented on their own.
package sheets
