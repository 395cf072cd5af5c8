// Package notes is the bundled "notes" plugin: a local page store in the
// spirit of Notion's (create_page, get_page, query_pages,
// append_block), so plans that create a page and pass its page_url on work
// with no account. The whole store, including the idempotency records,
// lives in one JSON file under the plugin's data directory and is replaced
// atomically on every change: a page and the key that created it are
// written together or not at all.
package notes
