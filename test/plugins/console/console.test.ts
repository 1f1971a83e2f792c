// The web console: its files through the HTTP pipeline, and the console itself in headless
// chromium against a real host (sign in, the live mesh, a drain, an incident, a trace).
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { startHost, type TestHost } from '../../helpers/host';
import { eventually } from '../../helpers/eventually';
import { ingestTrace, openBrowser, signIn, type Session } from './browser';

const ONLY = { mesh: { only: ['analytics'], nodesPerKernel: 2 } };

describe('console plugin: static files', () => {
  let t: TestHost;
  before(async () => (t = await startHost({ config: ONLY })));
  after(() => t.stop());

  it('serves the page without credentials, with a strict content security policy', async () => {
    for (const p of ['/console', '/console/', '/api/console/']) {
      const r = await t.request('GET', p, { token: null });
      expect(r.status, p).to.equal(200);
      expect(r.headers.get('content-type')).to.equal('text/html; charset=utf-8');
      expect(r.text).to.include('<script defer src="/console/app.js"></script>');
    }
    const r = await t.request('GET', '/console/', { token: null });
    expect(r.headers.get('content-security-policy')).to.include("script-src 'self'").and.include("frame-ancestors 'none'");
    expect(r.headers.get('x-frame-options')).to.equal('DENY');
    expect(r.headers.get('x-request-id')).to.be.a('string');
  });

  it('serves the bundle with its types and no-cache', async () => {
    const js = await t.request('GET', '/console/app.js', { token: null });
    expect(js.status).to.equal(200);
    expect(js.headers.get('content-type')).to.equal('text/javascript; charset=utf-8');
    expect(js.headers.get('cache-control')).to.equal('no-cache');
    expect(js.headers.get('x-content-type-options')).to.equal('nosniff');
    const css = await t.request('GET', '/console/style.css', { token: null });
    expect(css.status).to.equal(200);
    expect(css.headers.get('content-type')).to.equal('text/css; charset=utf-8');
  });

  it('answers 404 for a file the bundle does not have and 422 for a name that is not a bundle file', async () => {
    const missing = await t.request('GET', '/console/other.js', { token: null });
    expect(missing.status).to.equal(404);
    expect(missing.body.code).to.equal('CONSOLE_FILE_NOT_FOUND');
    for (const bad of ['/console/..%2Fpackage.json', '/console/index.ts', '/console/.env.js']) {
      const r = await t.request('GET', bad, { token: null });
      expect(r.status, bad).to.equal(422);
      expect(r.body.code).to.equal('VALIDATION_ERROR');
    }
    expect((await t.request('POST', '/console/', { token: null })).status).to.equal(405);
  });
});

describe('console plugin: in headless chromium', function () {
  this.timeout(60_000);
  let t: TestHost;
  let b: Session;
  let page: Page;
  before(async () => {
    t = await startHost({ config: ONLY });
    await eventually(() => t.host.services.mesh.globalHealth.health === 'healthy', 10_000, 'healthy mesh');
    b = await openBrowser();
    page = b.page;
  });
  after(async () => {
    await b?.close();
    await t?.stop();
  });

  it('refuses a wrong password on the login page and signs in with the right one', async () => {
    await page.goto(`${t.url}/console/`);
    await page.getByLabel('Email').fill(t.admin.email);
    await page.getByLabel('Password').fill('not-the-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: /invalid|incorrect|credentials/i }).waitFor();
    await signIn(page, t);
    await page.getByText('live', { exact: true }).waitFor();
  });

  it('shows the mesh: kernels and nodes with state, health, threads and breaker', async () => {
    const row = page.locator('tr[data-node="analytics-1"]');
    await row.waitFor();
    expect(await row.locator('td.state').innerText()).to.equal('active');
    expect(await row.innerText()).to.match(/healthy/).and.match(/1\/1/);
    expect(await page.locator('section.kernel .kernel-head').first().innerText()).to.match(/analytics/).and.match(/breaker\s+closed/);
    expect(await page.locator('tr[data-node]').count()).to.equal(2);
  });

  it('drains a node through a confirmation and shows its state change live', async () => {
    const state = page.locator('tr[data-node="analytics-2"] td.state');
    await page.getByRole('button', { name: 'Drain analytics-2' }).click();
    const dialog = page.getByRole('dialog', { name: 'Drain analytics-2?' });
    await dialog.getByLabel('Deadline (seconds)').fill('600');
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    await eventually(async () => (await state.innerText()) === 'draining', 5000, 'draining shown');
    expect((await t.request('GET', '/mesh/nodes/analytics-2')).body.state).to.equal('draining');
    // A change made elsewhere (another operator, over the API) reaches the page by the stream.
    const done = await t.request('POST', '/mesh/nodes/analytics-2/drain/complete', { body: {} });
    expect(done.status).to.equal(200);
    await eventually(async () => (await state.innerText()) === 'drained', 5000, 'drained shown');
    // The node page shows the finished drain.
    await page.getByRole('link', { name: 'analytics-2' }).click();
    await page.getByRole('heading', { name: 'Node analytics-2' }).waitFor();
    await eventually(async () => /Progress 100%/.test(await page.locator('.drain').innerText()), 5000, 'drain progress');
    expect(await page.locator('#node-state').innerText()).to.match(/^drained/);
  });

  it('a cancelled confirmation changes nothing', async () => {
    await page.goto(`${t.url}/console/#/mesh`);
    await page.getByRole('button', { name: 'Pause analytics-1' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    expect((await t.request('GET', '/mesh/nodes/analytics-1')).body.state).to.equal('active');
  });

  it('opens an incident with its timeline and resolves it', async () => {
    const created = await t.request('POST', '/incidents/detect', { body: { title: 'Checkout latency high', severity: 'high', kernel_id: 'analytics' } });
    expect(created.status).to.equal(201);
    await page.getByRole('link', { name: 'Incidents' }).click();
    await page.getByRole('link', { name: 'Checkout latency high' }).click();
    await page.getByRole('heading', { name: 'Checkout latency high' }).waitFor();
    expect(await page.locator('ol.timeline li').first().innerText()).to.match(/opened → open/);
    await page.getByRole('button', { name: 'Resolve…' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Note').fill('fixed by the browser test');
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    await eventually(async () => (await page.locator('ol.timeline li').count()) === 2, 5000, 'resolved entry');
    expect((await t.request('GET', `/ops/incidents/${created.body.id}`)).body.state).to.equal('resolved');
  });

  it('shows a trace as a waterfall of its spans', async () => {
    const trace = await ingestTrace(t);
    await page.goto(`${t.url}/console/#/telemetry`);
    await page.getByRole('link', { name: `Trace ${trace}` }).first().click();
    await page.getByRole('heading', { name: `Trace ${trace}` }).waitFor();
    const chart = page.getByRole('img', { name: /Spans on one time axis/ });
    await chart.waitFor();
    expect(await chart.locator('rect.bar').count()).to.equal(3);
    expect(await chart.locator('rect.bar.err').count()).to.equal(1);
    expect(await page.locator('.summary').innerText()).to.match(/^3 spans over 900 ms/);
  });

  it('gives a viewer no mesh controls', async () => {
    const viewer = await t.userToken('viewer');
    const fresh = await b.context.newPage();
    await signIn(fresh, t, viewer.email, 'a-long-test-password-1');
    await fresh.locator('tr[data-node="analytics-1"]').waitFor();
    expect(await fresh.getByRole('button', { name: /^(Pause|Drain|Resume)/ }).count()).to.equal(0);
    await fresh.close();
  });
});
