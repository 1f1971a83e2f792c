// Headless Debian chromium driven by playwright-core, for the console's tests and
// `make screenshots`. The flags keep it from reaching anything but the host under test.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import type { TestHost } from '../../helpers/host';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export interface Session {
  context: BrowserContext;
  page: Page;
  close(): Promise<void>;
}

/** A browser with a fresh profile (a new --user-data-dir) and one page at 1366x768 (a laptop screen). */
export async function openBrowser(): Promise<Session> {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-chromium-'));
  // playwright passes the profile as --user-data-dir.
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1366, height: 768 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    close: async () => {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Opens the console and signs in through its login form; resolves on the mesh page. */
export async function signIn(page: Page, t: TestHost, email = t.admin.email, password = t.admin.password): Promise<void> {
  await page.goto(`${t.url}/console/`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Mesh', level: 2 }).waitFor();
}

/** Three LLM calls of one trace (an agent call and two children); returns the trace id. */
export async function ingestTrace(t: TestHost): Promise<string> {
  const trace = crypto.randomUUID().replace(/-/g, '');
  const root = '1'.repeat(16);
  const at = (ms: number) => new Date(Date.now() - 60_000 + ms).toISOString();
  const call = (span: string, parent: string | null, ms: number, duration: number, model: string, cost: number, status = 'ok') => ({
    trace_id: trace,
    span_id: span,
    parent_span_id: parent,
    timestamp: at(ms),
    duration_ms: duration,
    provider: 'openai',
    request_model: model,
    operation: 'chat',
    status,
    input_tokens: 120,
    output_tokens: 40,
    cost_usd: cost,
  });
  const events = [call(root, null, 0, 900, 'planner', 0.0042), call('2'.repeat(16), root, 50, 400, 'gpt-4o', 0.0031), call('3'.repeat(16), root, 500, 350, 'gpt-4o-mini', 0.0004, 'error')];
  for (const e of events) {
    const r = await t.request('POST', '/observability/v1/ingest/llm-call', { body: e });
    if (r.status !== 201 && r.status !== 202 && r.status !== 200) throw new Error(`ingest answered ${r.status}: ${r.text}`);
  }
  return trace;
}
