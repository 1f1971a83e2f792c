import crypto from 'node:crypto';
import { expect } from 'chai';
import { z } from 'zod';
import { core } from '../../core/services';
import { definePlugin } from '../../core/plugin';
import { anyRoute as route } from '../helpers/host';
import { tenantScope } from '../../core/tenancy';
import { eachDatabase, startHost, type TestHost } from '../helpers/host';

// A plugin that keeps tenant data only through the tenant scope.
const notes = definePlugin({
  id: 'notes',
  prefix: '/notes',
  deps: { db: core.db },
  migrations: [
    {
      name: '001_notes',
      up: (db) =>
        db.schema.createTable('notes', (t) => {
          t.string('id', 36).primary();
          t.string('tenant_id', 64).notNullable();
          t.text('text').notNullable();
        }),
    },
  ],
  routes: () => [
    route({
      method: 'post',
      path: '/',
      summary: 'add a note',
      access: 'member',
      body: z.object({ text: z.string(), tenant_id: z.string().optional() }),
      status: 201,
      handler: async ({ body, caller, services }) => {
        const id = crypto.randomUUID();
        // A tenant_id in the row is overwritten with the caller's.
        await tenantScope(services.db, caller!).insert('notes', { id, text: body.text, tenant_id: body.tenant_id });
        return { id };
      },
    }),
    route({
      method: 'get',
      path: '/',
      summary: 'list notes, optionally matching text',
      access: 'viewer',
      query: z.object({ text: z.string().optional() }),
      handler: async ({ query, caller, services }) => {
        const q = tenantScope(services.db, caller!).select('notes').orderBy('text');
        // A careless OR cannot widen the scope: it applies inside the tenant's rows.
        if (query.text) q.where('text', query.text).orWhere('text', 'like', '%');
        return { notes: await q };
      },
    }),
    route({
      method: 'get',
      path: '/{note_id}',
      summary: 'one note',
      access: 'viewer',
      params: z.object({ note_id: z.uuid() }),
      handler: ({ params, caller, services }) => tenantScope(services.db, caller!).get('notes', { id: params.note_id }, 'Note'),
    }),
    route({
      method: 'put',
      path: '/{note_id}',
      summary: 'edit a note',
      access: 'member',
      params: z.object({ note_id: z.uuid() }),
      body: z.object({ text: z.string() }),
      handler: async ({ params, body, caller, services }) => {
        await tenantScope(services.db, caller!).update('notes', { id: params.note_id }, { text: body.text, tenant_id: 'elsewhere' }, 'Note');
        return { ok: true };
      },
    }),
    route({
      method: 'delete',
      path: '/{note_id}',
      summary: 'delete a note',
      access: 'member',
      params: z.object({ note_id: z.uuid() }),
      handler: async ({ params, caller, services }) => {
        await tenantScope(services.db, caller!).delete('notes', { id: params.note_id }, 'Note');
        return { ok: true };
      },
    }),
  ],
});

eachDatabase('tenant-scoped data access', (db) => {
  let t: TestHost;
  before(async () => {
    t = await startHost({ db, plugins: [notes] });
  });
  after(() => t.stop());

  it("keeps two tenants apart: another tenant's object is 404 for every verb", async () => {
    const a = await t.userToken('member', 'tenant-a');
    const b = await t.userToken('member', 'tenant-b');
    const made = await t.request('POST', '/notes', { token: a.token, body: { text: 'a secret', tenant_id: 'tenant-b' } });
    expect(made.status).to.equal(201);
    const id = made.body.id;
    await t.request('POST', '/notes', { token: b.token, body: { text: 'b note' } });

    expect((await t.request('GET', `/notes/${id}`, { token: a.token })).body).to.include({ text: 'a secret', tenant_id: 'tenant-a' });
    const peek = await t.request('GET', `/notes/${id}`, { token: b.token });
    expect(peek.status).to.equal(404);
    expect(peek.body).to.deep.equal({ detail: 'Note not found', code: 'NOT_FOUND' });
    expect((await t.request('PUT', `/notes/${id}`, { token: b.token, body: { text: 'defaced' } })).status).to.equal(404);
    expect((await t.request('DELETE', `/notes/${id}`, { token: b.token })).status).to.equal(404);

    const listB = await t.request('GET', '/notes?text=b%20note', { token: b.token });
    expect(listB.body.notes.map((n: { text: string }) => n.text)).to.deep.equal(['b note']);
    const listA = await t.request('GET', '/notes', { token: a.token });
    expect(listA.body.notes.map((n: { text: string }) => n.text)).to.deep.equal(['a secret']);

    // The owner can still change it, and cannot move it to another tenant.
    expect((await t.request('PUT', `/notes/${id}`, { token: a.token, body: { text: 'edited' } })).status).to.equal(200);
    const row = await t.host.services.db('notes').where({ id }).first();
    expect(row).to.include({ text: 'edited', tenant_id: 'tenant-a' });
    expect((await t.request('DELETE', `/notes/${id}`, { token: a.token })).status).to.equal(200);
    expect((await t.request('GET', `/notes/${id}`, { token: a.token })).status).to.equal(404);
  });
});
