// An MCP client built on the official TypeScript SDK, driving Ordo the way
// an IDE or assistant does: plan -> approve -> approve (a step approval) ->
// execute with progress, plus a tool error and a resource read. It prints
// one JSON report of what it saw on stdout; interop_test.go judges it.
// The SDK validates every structured result against the tool's output
// schema, so a result that breaks its schema fails the call here.
//
//   node sdk-client.mjs --plan PLAN.json --stdio ORDO_BINARY [ARGS...]
//   ORDO_INTEROP_TOKEN=... node sdk-client.mjs --plan PLAN.json --url http://HOST:PORT/mcp
import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

function parseArgs(argv) {
  const out = { plan: '', url: '', stdio: [] };
  for (let i = 0; i < argv.length; i++) {
    switch (argv[i]) {
      case '--plan': out.plan = argv[++i]; break;
      case '--url': out.url = argv[++i]; break;
      case '--stdio': out.stdio = argv.slice(i + 1); i = argv.length; break;
      default: throw new Error(`unknown argument ${argv[i]}`);
    }
  }
  if (!out.plan || (!out.url && out.stdio.length === 0)) {
    throw new Error('usage: sdk-client.mjs --plan PLAN.json (--url URL | --stdio COMMAND [ARGS...])');
  }
  return out;
}

function transportFor(args) {
  if (args.url) {
    const token = process.env.ORDO_INTEROP_TOKEN;
    if (!token) throw new Error('ORDO_INTEROP_TOKEN must hold the bearer token');
    return new StreamableHTTPClientTransport(new URL(args.url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
  }
  const [command, ...rest] = args.stdio;
  return new StdioClientTransport({ command, args: rest, env: { ...process.env }, stderr: 'inherit' });
}

// view is a tool result as the report records it. A tool error's text is
// Ordo's error object.
function view(res) {
  const sc = res.structuredContent ?? {};
  const text = res.content?.[0]?.type === 'text' ? res.content[0].text : '';
  return {
    isError: res.isError === true,
    status: sc.status,
    run_id: sc.run_id,
    code: res.isError ? JSON.parse(text).code : undefined,
    structured: res.structuredContent !== undefined,
    interrupt: sc.interrupt ? { kind: sc.interrupt.kind, action_id: sc.interrupt.action_id } : undefined,
    steps: (sc.steps ?? []).map((s) => `${s.action_id}:${s.status}`),
    mermaid: typeof sc.mermaid === 'string' && sc.mermaid.startsWith('flowchart'),
    text: text.length > 0,
  };
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const plan = JSON.parse(readFileSync(args.plan, 'utf8'));
  const client = new Client({ name: 'ordo-interop-ts-sdk', version: '1.0.0' });
  const transport = transportFor(args);
  await client.connect(transport);
  const report = {
    server: client.getServerVersion(),
    protocol: transport.protocolVersion ?? null,
    capabilities: Object.keys(client.getServerCapabilities() ?? {}).sort(),
  };

  const { tools } = await client.listTools();
  report.tools = Object.fromEntries(tools.map((t) => [t.name, {
    output_schema: t.outputSchema?.type === 'object',
    hints: ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint']
      .filter((h) => typeof t.annotations?.[h] === 'boolean').length,
  }]));

  // plan stops before execution; approving the plan runs until the chat
  // post, which policy makes wait for a step approval; approving that
  // finishes the run.
  const planned = await client.callTool({ name: 'plan', arguments: { plan } });
  report.plan = view(planned);
  const runID = planned.structuredContent?.run_id;
  report.approve_plan = view(await client.callTool({ name: 'approve', arguments: { run_id: runID, decision: 'approve' } }));
  report.approve_step = view(await client.callTool({ name: 'approve', arguments: { run_id: runID, decision: 'approve' } }));

  // execute plans and runs in one call; the SDK sends a progress token
  // because onprogress is set. auto_approve answers the plan approval but
  // not the chat post, which policy confirms: that waits for approve.
  const progress = [];
  const executed = await client.callTool(
    { name: 'execute', arguments: { plan, options: { auto_approve: true } } },
    undefined,
    { onprogress: (p) => progress.push({ progress: p.progress, event: /^run \S+: (\S+)/.exec(p.message ?? '')?.[1] }) },
  );
  report.execute = view(executed);
  report.progress = progress;
  report.execute_approve = view(await client.callTool({ name: 'approve', arguments: { run_id: executed.structuredContent?.run_id, decision: 'approve' } }));

  // Ordo's errors are tool errors carrying its code, not protocol errors.
  report.unknown_run = view(await client.callTool({ name: 'execute', arguments: { run_id: 'run_does_not_exist' } }));

  const schema = await client.readResource({ uri: 'ordo://schemas/action-plan' });
  report.plan_schema = JSON.parse(schema.contents[0].text).$schema ?? null;

  await client.close();
  process.stdout.write(JSON.stringify(report) + '\n');
}

main().catch((err) => {
  process.stderr.write(`sdk-client: ${err?.stack ?? err}\n`);
  process.exit(1);
});
