// Package plugintest calls bundled-plugin tools in tests the way production
// does: through an sdk.Server, so every payload passes the input schema,
// every result the output schema, and every produces_map path is checked
// to find a value in real results. It proves the contracts honest without
// a plugin process; the host's tests cover the process boundary.
package plugintest
