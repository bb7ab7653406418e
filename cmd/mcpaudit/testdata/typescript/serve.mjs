// serve connects the servers newServer makes to the transport named on the
// command line, as the TypeScript SDK's docs and examples do:
//
//   node SERVER.mjs stdio        one server over stdio
//   node SERVER.mjs http PORT    streamable HTTP at http://127.0.0.1:PORT/mcp,
//                                a server and a transport per session, as in
//                                the SDK's simpleStreamableHttp example
import { randomUUID } from 'node:crypto';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';

export async function serve(newServer) {
  const [mode, port] = process.argv.slice(2);
  if (mode === 'stdio') {
    await newServer().connect(new StdioServerTransport());
    return;
  }
  if (mode !== 'http' || !port) {
    console.error('usage: node SERVER.mjs stdio | http PORT');
    process.exit(2);
  }
  const transports = {};
  const app = createMcpExpressApp();
  app.post('/mcp', async (req, res) => {
    const sessionId = req.headers['mcp-session-id'];
    let transport = sessionId ? transports[sessionId] : undefined;
    if (!transport && !sessionId && isInitializeRequest(req.body)) {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => { transports[id] = transport; },
      });
      transport.onclose = () => { delete transports[transport.sessionId]; };
      await newServer().connect(transport);
    }
    if (!transport) {
      res.status(400).json({ jsonrpc: '2.0', error: { code: -32000, message: 'Bad Request: No valid session ID provided' }, id: null });
      return;
    }
    await transport.handleRequest(req, res, req.body);
  });
  const session = async (req, res) => {
    const transport = transports[req.headers['mcp-session-id']];
    if (!transport) {
      res.status(400).send('Invalid or missing session ID');
      return;
    }
    await transport.handleRequest(req, res);
  };
  app.get('/mcp', session);
  app.delete('/mcp', session);
  app.listen(Number(port), '127.0.0.1');
}
