// Package files is the bundled "files" plugin: read, write, list, search and
// delete files under one root directory (ORDO_FILES_ROOT). Every path is
// checked by safepath, so a plan can never reach outside the root through
// "..", an absolute path or a symlink, and all I/O goes through an os.Root.
// files.write and files.delete honour idempotency keys through a journal in
// the plugin's data directory.
package files
