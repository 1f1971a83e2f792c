import { expect } from 'chai';
import leads from '../../../plugins/leads';
import { sign } from '../../../plugins/leads/webhook';
import { startHost, type TestHost } from '../../helpers/host';

const SECRET = 'scheduler-secret-for-tests';

describe('contact form, demo leads and the scheduler webhook', () => {
  let t: TestHost;
  let acmeAdmin: string;
  let operator: string;
  before(async () => {
    t = await startHost({ plugins: [leads], config: { webhooks: { schedulerSecret: SECRET, toleranceSeconds: 300 }, contact: { perAddressPerHour: 5, maxMessageChars: 500 } } });
    acmeAdmin = (await t.userToken('admin', 'acme')).token;
    operator = (await t.userToken('operator')).token;
  });
  after(() => t.stop());

  const submit = (body: Record<string, unknown>) => t.request('POST', '/contact/submit', { token: null, body: { name: 'Ada', email: 'Ada@Example.com', message: 'We would like a demo', ...body } });
  const leadsList = async () => (await t.request('GET', '/leads/demo')).body.leads as Array<Record<string, any>>;

  const deliver = (payload: unknown, o: { id?: string; ts?: number; secret?: string; sig?: string } = {}) => {
    const raw = JSON.stringify(payload);
    const ts = String(o.ts ?? Math.floor(Date.now() / 1000));
    return t.request('POST', '/webhooks/scheduler', {
      token: null,
      raw,
      headers: { 'x-scheduler-timestamp': ts, 'x-scheduler-signature': o.sig ?? sign(o.secret ?? SECRET, ts, raw), 'x-scheduler-delivery': o.id ?? `d-${Math.random().toString(36).slice(2)}` },
    });
  };

  describe('POST /contact/submit and GET /leads/demo', () => {
    it('stores a lead, and a second message from the same address (any case) updates it', async () => {
      const a = await submit({ company: 'Analytical Engines' });
      expect(a.status).to.equal(202);
      expect(a.body.received).to.equal(true);
      const b = await submit({ email: 'ada@EXAMPLE.com', message: 'Second note' });
      expect(b.status).to.equal(202);
      const list = await leadsList();
      expect(list).to.have.length(1);
      expect(list[0]).to.include({ email: 'ada@example.com', company: 'Analytical Engines', last_message: 'Second note', submissions: 2, stage: 'new', source: 'contact_form' });
    });

    it('answers a filled honeypot like a person but keeps no lead', async () => {
      const r = await submit({ email: 'bot@spam.test', website: 'http://spam.test' });
      expect(r.status).to.equal(202);
      expect((await leadsList()).map((l) => l.email)).to.not.include('bot@spam.test');
    });

    it('refuses bad input and too long a message with 422', async () => {
      expect((await submit({ email: 'not-an-address' })).status).to.equal(422);
      expect((await submit({ message: '' })).status).to.equal(422);
      expect((await submit({ message: 'x'.repeat(501) })).status).to.equal(422);
      expect((await t.request('POST', '/contact/submit', { token: null, raw: '{"name":' })).status).to.equal(400);
    });

    it('lists leads to platform admins only', async () => {
      expect((await t.request('GET', '/leads/demo', { token: null })).status).to.equal(401);
      expect((await t.request('GET', '/leads/demo', { token: operator })).status).to.equal(403);
      const other = await t.request('GET', '/leads/demo', { token: acmeAdmin });
      expect(other.status).to.equal(403);
      expect(other.body.code).to.equal('PLATFORM_STAFF_ONLY');
      expect((await t.request('GET', '/leads/demo?stage=lost')).status).to.equal(422);
    });
  });

  describe('POST /webhooks/scheduler', () => {
    const booked = { event: 'booking.created', data: { email: 'grace@navy.test', name: 'Grace', start_time: '2030-01-02T15:00:00Z' } };

    it('books a demo for a signed delivery, once', async () => {
      const r = await deliver(booked, { id: 'delivery-1' });
      expect(r.status).to.equal(200);
      expect(r.body).to.include({ delivery_id: 'delivery-1', event: 'booking.created', action: 'book_demo' });
      const lead = (await leadsList()).find((l) => l.email === 'grace@navy.test')!;
      expect(lead).to.include({ id: r.body.lead_id, stage: 'demo_booked', demo_at: '2030-01-02T15:00:00.000Z', source: 'scheduler' });
      const again = await deliver(booked, { id: 'delivery-1' });
      expect(again.status).to.equal(409);
      expect(again.body.code).to.equal('REPLAYED');
      expect((await leadsList()).find((l) => l.email === 'grace@navy.test')!.submissions).to.equal(1);
      const cancelled = await deliver({ event: 'booking.cancelled', data: { email: 'grace@navy.test' } });
      expect(cancelled.status).to.equal(200);
      expect((await leadsList()).find((l) => l.email === 'grace@navy.test')).to.include({ stage: 'demo_cancelled', demo_at: null });
      const booked2 = (await leadsList()).filter((l) => l.stage === 'demo_booked');
      expect(booked2).to.have.length(0);
    });

    it('answers 401 for a wrong secret, a changed body or a stale timestamp, and changes nothing', async () => {
      const before = await leadsList();
      const wrong = await deliver(booked, { secret: 'another-secret-of-16' });
      expect(wrong.status).to.equal(401);
      expect(wrong.body.code).to.equal('BAD_SIGNATURE');
      expect((await deliver(booked, { sig: 'sha256=00' })).status).to.equal(401);
      const stale = await deliver(booked, { ts: Math.floor(Date.now() / 1000) - 301 });
      expect(stale.status).to.equal(401);
      expect(stale.body.code).to.equal('STALE_TIMESTAMP');
      const raw = JSON.stringify(booked);
      const ts = String(Math.floor(Date.now() / 1000));
      const tampered = await t.request('POST', '/webhooks/scheduler', { token: null, raw: raw.replace('Grace', 'Eve'), headers: { 'x-scheduler-timestamp': ts, 'x-scheduler-signature': sign(SECRET, ts, raw), 'x-scheduler-delivery': 'd-tampered' } });
      expect(tampered.status).to.equal(401);
      expect(await leadsList()).to.deep.equal(before);
    });

    it('answers 422 for a signed payload it cannot map, and 503 when no secret is configured', async () => {
      expect((await deliver({ event: 'booking.created', data: { email: 'x@y.test' } })).status).to.equal(422);
      expect((await deliver({ event: 'payment.made', data: {} })).status).to.equal(422);
      expect((await deliver(booked, { id: 'bad id with spaces' })).status).to.equal(422);
      // workflow.run needs the workflows plugin, which this host does not have
      const run = await deliver({ event: 'workflow.run', data: { workflow_id: 'w-1' } }, { id: 'run-without-workflows' });
      expect(run.status).to.equal(503);
      expect(run.body).to.include({ code: 'NOT_CONFIGURED' });
      expect(await t.host.services.db('webhook_deliveries').where({ id: 'run-without-workflows' })).to.deep.equal([]);
      const cfg = t.host.services.config.webhooks;
      cfg.schedulerSecret = undefined;
      try {
        const r = await deliver(booked);
        expect(r.status).to.equal(503);
        expect(r.body.code).to.equal('NOT_CONFIGURED');
        expect(r.body.detail).to.contain('webhooks.schedulerSecret');
      } finally {
        cfg.schedulerSecret = SECRET;
      }
    });
  });

  describe('the per-address budget', () => it('limits submissions per address (the budget counts every submission, bots too)', async () => {
    // 3 were accepted above (2 messages and the honeypot); the budget is 5 an hour.
    expect((await submit({ email: 'four@x.test' })).status).to.equal(202);
    expect((await submit({ email: 'five@x.test' })).status).to.equal(202);
    const r = await submit({ email: 'six@x.test' });
    expect(r.status).to.equal(429);
    expect(Number(r.headers.get('retry-after'))).to.be.greaterThan(0);
    expect((await leadsList()).map((l) => l.email)).to.not.include('six@x.test');
  }));
});
