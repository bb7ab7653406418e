// A resource server written with the TypeScript SDK's low-level Server, as
// its docs write one: a handler per method, for the list of notes (in
// pages of two, the cursor an opaque token), their template, reads,
// completions and subscriptions. Two tools make changes for mcpaudit:
// touch {uri} tells the subscribers of uri that it changed, add adds a
// note and tells the list change.
import { randomUUID } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema, CompleteRequestSchema, ErrorCode, ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema, ListToolsRequestSchema, McpError, ReadResourceRequestSchema,
  SubscribeRequestSchema, UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { serve } from './serve.mjs';

const notes = new Map([['1', 'first note'], ['2', 'second note'], ['3', 'third note']]);
const pageSize = 2;

function newServer() {
  const server = new Server({ name: 'ts-lowlevel', version: '1.0.0' }, {
    capabilities: { resources: { subscribe: true, listChanged: true }, tools: {}, completions: {} },
  });
  const subscribed = new Set();
  const cursors = new Map(); // an opaque token, to the offset it stands for

  server.setRequestHandler(ListResourcesRequestSchema, async (req) => {
    let offset = 0;
    const cursor = req.params?.cursor;
    if (cursor !== undefined) {
      if (!cursors.has(cursor)) {
        throw new McpError(ErrorCode.InvalidParams, 'invalid cursor');
      }
      offset = cursors.get(cursor);
    }
    const ids = [...notes.keys()];
    const page = { resources: ids.slice(offset, offset + pageSize).map((id) => ({ uri: `notes://${id}`, name: `note ${id}`, mimeType: 'text/plain' })) };
    if (offset + pageSize < ids.length) {
      page.nextCursor = randomUUID();
      cursors.set(page.nextCursor, offset + pageSize);
    }
    return page;
  });
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: [{ uriTemplate: 'notes://{id}', name: 'note', mimeType: 'text/plain' }],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (req) => {
    const { uri } = req.params;
    const id = uri.startsWith('notes://') ? uri.slice('notes://'.length) : undefined;
    if (id === undefined || !notes.has(id)) {
      throw new McpError(ErrorCode.InvalidParams, `Resource ${uri} not found`, { uri });
    }
    return { contents: [{ uri, mimeType: 'text/plain', text: notes.get(id) }] };
  });
  server.setRequestHandler(CompleteRequestSchema, async (req) => {
    const { ref, argument } = req.params;
    if (ref.type !== 'ref/resource' || ref.uri !== 'notes://{id}' || argument.name !== 'id') {
      return { completion: { values: [] } };
    }
    const values = [...notes.keys()].filter((id) => id.startsWith(argument.value));
    return { completion: { values, total: values.length, hasMore: false } };
  });
  server.setRequestHandler(SubscribeRequestSchema, async (req) => {
    subscribed.add(req.params.uri);
    return {};
  });
  server.setRequestHandler(UnsubscribeRequestSchema, async (req) => {
    subscribed.delete(req.params.uri);
    return {};
  });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [
      { name: 'touch', description: 'tell the subscribers of uri that it changed', inputSchema: { type: 'object', properties: { uri: { type: 'string' } }, required: ['uri'] } },
      { name: 'add', description: 'add a note', inputSchema: { type: 'object', properties: {} } },
    ],
  }));
  server.setRequestHandler(CallToolRequestSchema, async (req) => {
    const { name, arguments: args } = req.params;
    if (name === 'touch') {
      if (subscribed.has(args.uri)) {
        await server.sendResourceUpdated({ uri: args.uri });
      }
      return { content: [{ type: 'text', text: `touched ${args.uri}` }] };
    }
    if (name === 'add') {
      const id = String(notes.size + 1);
      notes.set(id, `note ${id}`);
      await server.sendResourceListChanged();
      return { content: [{ type: 'text', text: `added notes://${id}` }] };
    }
    throw new McpError(ErrorCode.InvalidParams, `no tool ${name}`);
  });
  return server;
}

await serve(newServer);
