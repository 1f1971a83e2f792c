// The console's one door to the service: typed calls through @platform-control/client
// (generated from /openapi.json) and its typed /ops/stream client. Pages import only this
// file, never a path string of the API.
import { createClient, openStream, type PlatformClient, type Stream as ClientStream, type StreamMessage } from '@platform-control/client';

/** An answer other than 2xx, with the service's `{detail, code}`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    detail: string,
  ) {
    super(detail);
  }
}

export interface User {
  id: string;
  email: string;
  role: string;
  tenant_id: string;
}

// The token lives in this module only (memory): never in storage or a cookie, so no other
// page can send it and a reload asks for the password again (docs/console.md).
let token: string | null = null;
let user: User | null = null;
let onExpired: () => void = () => undefined;
let client: PlatformClient = createClient({ baseUrl: location.origin });

export const session = {
  get user(): User | null {
    return user;
  },
  /** Called when the service refuses the token (expired or revoked). */
  onExpired(fn: () => void): void {
    onExpired = fn;
  },
};

const ROLES = ['viewer', 'member', 'operator', 'admin'];
/** Whether the signed-in user has `role` or a higher one. */
export function can(role: 'viewer' | 'member' | 'operator' | 'admin'): boolean {
  return user !== null && ROLES.indexOf(user.role) >= ROLES.indexOf(role);
}

function describe(detail: unknown): string {
  if (typeof detail === 'string') return detail;
  if (Array.isArray(detail)) return detail.map((d: { loc?: unknown[]; msg?: string }) => `${(d.loc ?? []).join('.')}: ${d.msg ?? ''}`).join('; ');
  return JSON.stringify(detail);
}

/** The data of a 2xx answer; otherwise an ApiError (and, on a 401, the session ends). */
async function data<T>(pending: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data: body, error, response } = await pending;
  if (response.ok) return body as T;
  const e = (error ?? {}) as { detail?: unknown; code?: string };
  if (response.status === 401 && token) {
    token = null;
    user = null;
    client = createClient({ baseUrl: location.origin });
    onExpired();
  }
  throw new ApiError(response.status, e.code ?? String(response.status), describe(e.detail ?? response.statusText));
}

export async function login(email: string, password: string): Promise<User> {
  const r = await data(client.POST('/auth/login', { body: { email, password } }));
  token = r.token;
  user = r.user as User;
  client = createClient({ baseUrl: location.origin, token });
  return user;
}

export async function logout(): Promise<void> {
  if (token) await client.POST('/auth/logout').catch(() => undefined);
  token = null;
  user = null;
  client = createClient({ baseUrl: location.origin });
  stream.close();
}

const node = (node_id: string) => ({ params: { path: { node_id } } });
const kernel = (kernel_id: string) => ({ params: { path: { kernel_id } } });
const incident = (incident_id: string) => ({ params: { path: { incident_id } } });
const Q = '/observability/v1/query';

export interface DrainOptions {
  deadline_seconds: number;
  force: boolean;
}

/** Every call the console makes, typed by the OpenAPI document. */
export const api = {
  kernels: () => data(client.GET('/ops/kernels')),
  overview: () => data(client.GET('/ops/mesh/overview')),
  node: (id: string) => data(client.GET('/mesh/nodes/{node_id}', node(id))),
  drainStatus: (id: string) => data(client.GET('/mesh/nodes/{node_id}/drain/status', node(id))),
  pauseNode: (id: string) => data(client.POST('/mesh/nodes/{node_id}/pause', node(id))),
  resumeNode: (id: string) => data(client.POST('/mesh/nodes/{node_id}/resume', node(id))),
  drainNode: (id: string, body: DrainOptions) => data(client.POST('/mesh/nodes/{node_id}/drain', { ...node(id), body })),
  completeDrain: (id: string, force: boolean) => data(client.POST('/mesh/nodes/{node_id}/drain/complete', { ...node(id), body: { force } })),
  abortDrain: (id: string) => data(client.POST('/mesh/nodes/{node_id}/drain/abort', node(id))),
  pauseKernel: (id: string) => data(client.POST('/ops/kernels/{kernel_id}/pause', kernel(id))),
  resumeKernel: (id: string) => data(client.POST('/ops/kernels/{kernel_id}/resume', kernel(id))),
  drainKernel: (id: string, body: DrainOptions) => data(client.POST('/ops/kernels/{kernel_id}/drain', { ...kernel(id), body })),

  activeIncidents: () => data(client.GET('/ops/incidents/active')),
  incident: (id: string) => data(client.GET('/ops/incidents/{incident_id}', incident(id))),
  mitigate: (id: string, body: { action: 'pause_kernel' | 'isolate_kernel' | 'drain_node' | 'restart_node'; target: string; note?: string }) =>
    data(client.POST('/incidents/{incident_id}/mitigate', { ...incident(id), body })),
  resolve: (id: string, note?: string) => data(client.POST('/ops/incidents/{incident_id}/resolve', { ...incident(id), body: { note } })),
  close: (id: string, note?: string) => data(client.POST('/incidents/{incident_id}/close', { ...incident(id), body: { note } })),

  slo: () => data(client.GET('/ops/slo')),

  definitions: () => data(client.GET('/ops/workflows/definitions')),
  executions: () => data(client.GET('/ops/workflows', { params: { query: { limit: 50 } } })),
  runWorkflow: (id: string) => data(client.POST('/workflows/{workflow_id}/run', { params: { path: { workflow_id: id } } })),
  cancelExecution: (id: string) => data(client.POST('/ops/workflows/{execution_id}/cancel', { params: { path: { execution_id: id } } })),

  scenarios: () => data(client.GET('/ops/resilience/scenarios')),
  experiments: () => data(client.GET('/ops/resilience/experiments', { params: { query: { limit: 50 } } })),
  runScenario: (id: string) => data(client.POST('/ops/resilience/scenarios/{scenario_id}/run', { params: { path: { scenario_id: id } } })),
  abortExperiment: (id: string) => data(client.POST('/ops/resilience/experiments/{experiment_id}/abort', { params: { path: { experiment_id: id } } })),
  halt: () => data(client.POST('/ops/resilience/halt')),

  events: (type?: 'llm-call' | 'kernel' | 'policy' | 'outcome' | 'evaluation') => data(client.GET(`${Q}/events`, { params: { query: { limit: 50, type } } })),
  llmCalls: (query: { since?: string; until?: string; group_by?: string }) => data(client.GET(`${Q}/metrics/llm-calls`, { params: { query } })),
  trace: (id: string) => data(client.GET(`${Q}/traces/{trace_id}`, { params: { path: { trace_id: id } } })),
};

export type StreamEvent = StreamMessage;
type Listener = (e: StreamEvent) => void;

/**
 * One /ops/stream connection shared by every page (the client's typed stream, the browser's
 * WebSocket); it reconnects with a growing pause while the user is signed in. `onStatus`
 * listeners learn whether it is live.
 */
class LiveStream {
  private current: ClientStream | null = null;
  private readonly listeners = new Set<Listener>();
  private readonly statusListeners = new Set<(live: boolean) => void>();
  private retry = 500;
  private timer: number | undefined;
  live = false;

  on(fn: Listener): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  onStatus(fn: (live: boolean) => void): void {
    this.statusListeners.add(fn);
  }

  open(): void {
    if (this.current || !token) return;
    const s = openStream({ baseUrl: location.origin, token });
    this.current = s;
    s.on('*', (e) => {
      for (const fn of this.listeners) fn(e);
    });
    s.opened.then(
      () => {
        this.retry = 500;
        this.setLive(true);
      },
      () => undefined,
    );
    void s.closed.then(() => {
      if (this.current !== s) return;
      this.current = null;
      this.setLive(false);
      if (!token) return;
      this.timer = window.setTimeout(() => this.open(), this.retry);
      this.retry = Math.min(this.retry * 2, 10_000);
    });
  }

  close(): void {
    window.clearTimeout(this.timer);
    const s = this.current;
    this.current = null;
    s?.close();
    this.setLive(false);
  }

  private setLive(live: boolean): void {
    this.live = live;
    for (const fn of this.statusListeners) fn(live);
  }
}

export const stream = new LiveStream();
