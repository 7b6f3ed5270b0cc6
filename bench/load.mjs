// A paced HTTP load for bench/scale_rows.py: N clients, each with its own
// keep-alive connection (node's http.Agent, one socket), each sending
// 2026-07-28 tools/call requests at rate/N a second (or back to back with
// rate 0) for duration_ms, and the latency of every answered call.
//
//   node bench/load.mjs '{"url": ..., "token": ..., "rate": 400, "duration_ms": 8000,
//                         "calls": [{"name": "run_python", "arguments": {...}}, ...]}'
//
// One entry of "calls" per client (its session_id among the arguments:
// sent as Mcp-Param-Session-Id, as a conforming client does; its own
// "token", else the plan's). Prints one
// JSON object: {"ms": [latencies], "errors": n, "seconds": elapsed}.
// Built-in modules only: it runs on the node tests/node pins.
import http from 'node:http';

const plan = JSON.parse(process.argv[2]);
const url = new URL(plan.url);
const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };

function post(agent, call, id) {
  const body = JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call',
    params: { name: call.name, arguments: call.arguments, _meta: META } });
  const headers = {
    'Content-Type': 'application/json', Accept: 'application/json', Authorization: `Bearer ${call.token || plan.token}`,
    'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/call', 'Mcp-Name': call.name,
    'Content-Length': Buffer.byteLength(body),
  };
  if (call.arguments?.session_id) headers['Mcp-Param-Session-Id'] = call.arguments.session_id;
  return new Promise((resolve) => {
    const req = http.request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', agent, headers },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (data += d));
        res.on('end', () => {
          let ok = res.statusCode === 200;
          try {
            const r = JSON.parse(data);
            ok = ok && r.result && !r.result.isError;
          } catch {
            ok = false;
          }
          resolve(ok);
        });
      });
    req.on('error', () => resolve(false));
    req.end(body);
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const ms = [];
let errors = 0;
const t0 = performance.now();
const end = t0 + plan.duration_ms;
await Promise.all(plan.calls.map(async (call, i) => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const every = plan.rate > 0 ? (1000 * plan.calls.length) / plan.rate : 0;
  // Spread the clients' first calls over one period, then keep the pace
  // (a late call goes at once: closed loop once saturated).
  let next = t0 + (every * i) / plan.calls.length;
  let id = 0;
  while (next < end) {
    const wait = next - performance.now();
    if (wait > 0) await sleep(wait);
    const s = performance.now();
    if (await post(agent, call, ++id)) ms.push(performance.now() - s);
    else errors++;
    next = every ? next + every : performance.now();
  }
  agent.destroy();
}));
process.stdout.write(JSON.stringify({ ms, errors, seconds: (performance.now() - t0) / 1000 }));
