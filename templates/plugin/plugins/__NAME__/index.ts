// plugins/__NAME__/index.ts: entries that a tenant's members write and its viewers read.
import crypto from 'node:crypto';
import { pageOf } from '../../core/pagination';
import { definePlugin, type Resolved } from '../../core/plugin';
import { core } from '../../core/services';
import { tenantScope } from '../../core/tenancy';
import { __CAMEL__Migrations } from './migrations';
import { entriesPage, entry, entryParams, listQuery, newEntry, type Entry } from './schemas';

const TABLE = '__SNAKE___entries';

// What handlers, start and stop get: nothing else is reachable from them.
const deps = { db: core.db, actions: core.actions, clock: core.clock };
export type Deps = Resolved<typeof deps>;

/** A row as the API shows it (the tenant is implied by the caller). */
function view(row: Record<string, any>): Entry {
  return { id: row.id, title: row.title, body: row.body, created_by: row.created_by, created_at: row.created_at };
}

export default definePlugin({
  id: '__NAME__',
  prefix: '/__NAME__',
  deps,
  migrations: __CAMEL__Migrations,
  routes: (route) => [
    route({
      method: 'post',
      path: '/entries',
      summary: "Writes an entry in the caller's tenant",
      access: 'member',
      body: newEntry,
      response: entry,
      status: 201,
      handler: async ({ body, caller, services }) => {
        const row = { id: crypto.randomUUID(), ...body, created_by: caller!.id, created_at: services.clock.now().toISOString() };
        await tenantScope(services.db, caller!).insert(TABLE, row);
        await services.actions.record({ source: 'manual', actor: caller!.id, action: 'create_entry', target_type: '__SNAKE___entry', target_id: row.id, result: 'succeeded', tenant_id: caller!.tenantId, detail: { title: row.title } });
        return view(row);
      },
    }),
    route({
      method: 'get',
      path: '/entries',
      summary: "The tenant's entries, newest first",
      access: 'viewer',
      query: listQuery,
      response: entriesPage,
      handler: async ({ query, caller, services }) => {
        const page = await pageOf(tenantScope(services.db, caller!).select(TABLE), query.limit, query.cursor);
        return { entries: page.items.map(view), next_cursor: page.next_cursor };
      },
    }),
    route({
      method: 'get',
      path: '/entries/{entry_id}',
      summary: 'One entry of the tenant; another tenant\'s is 404',
      access: 'viewer',
      params: entryParams,
      response: entry,
      errors: [404],
      handler: async ({ params, caller, services }) => view(await tenantScope(services.db, caller!).get(TABLE, { id: params.entry_id }, 'Entry')),
    }),
  ],
});
