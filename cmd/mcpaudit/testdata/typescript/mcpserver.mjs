// A resource server written with the TypeScript SDK's high-level McpServer,
// as its docs write one: notes listed by a ResourceTemplate's list callback
// and completed by its complete callback, and a fixed resource. McpServer
// has no subscriptions of its own: the low-level server under it takes
// resources/subscribe and resources/unsubscribe, as the SDK's docs say to
// do for a method McpServer does not cover. Two tools make changes for
// mcpaudit: touch {uri} tells the subscribers of uri that it changed, add
// adds a note, which McpServer tells as a list change.
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SubscribeRequestSchema, UnsubscribeRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { serve } from './serve.mjs';

const notes = new Map([['1', 'first note'], ['2', 'second note'], ['3', 'third note']]);

function newServer() {
  const server = new McpServer({ name: 'ts-mcpserver', version: '1.0.0' });
  const subscribed = new Set();

  server.registerResource('about', 'notes://about', { title: 'About', mimeType: 'text/plain' },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'notes, one a resource' }] }));

  server.registerResource('note', new ResourceTemplate('notes://{id}', {
    list: async () => ({
      resources: [...notes.keys()].map((id) => ({ uri: `notes://${id}`, name: `note ${id}`, mimeType: 'text/plain' })),
    }),
    complete: { id: (value) => [...notes.keys()].filter((id) => id.startsWith(value)) },
  }), { title: 'Note', mimeType: 'text/plain' }, async (uri, { id }) => {
    if (!notes.has(id)) {
      throw new Error(`no note ${id}`);
    }
    return { contents: [{ uri: uri.href, mimeType: 'text/plain', text: notes.get(id) }] };
  });

  server.server.registerCapabilities({ resources: { subscribe: true } });
  server.server.setRequestHandler(SubscribeRequestSchema, async (req) => {
    subscribed.add(req.params.uri);
    return {};
  });
  server.server.setRequestHandler(UnsubscribeRequestSchema, async (req) => {
    subscribed.delete(req.params.uri);
    return {};
  });

  server.registerTool('touch', { description: 'tell the subscribers of uri that it changed', inputSchema: { uri: z.string() } },
    async ({ uri }) => {
      if (subscribed.has(uri)) {
        await server.server.sendResourceUpdated({ uri });
      }
      return { content: [{ type: 'text', text: `touched ${uri}` }] };
    });
  server.registerTool('add', { description: 'add a note' }, async () => {
    const id = String(notes.size + 1);
    notes.set(id, `note ${id}`);
    server.sendResourceListChanged();
    return { content: [{ type: 'text', text: `added notes://${id}` }] };
  });
  return server;
}

await serve(newServer);
