// Package plugins is the plugin side of Ordo: the gRPC protocol (proto),
// the SDK a third party imports to ship tools as a plugin binary (sdk), and
// the plugins bundled with Ordo. The host side — loading, supervising and
// calling plugins — lives in the host package; the two meet only at the
// protocol, so a plugin can be written in any language that speaks gRPC.
package plugins
