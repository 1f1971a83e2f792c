import type { AppListener } from './http/app';

export type HostState = 'created' | 'starting' | 'running' | 'stopping' | 'stopped';

/** Where the host is in its life; readiness checks and shutdown read it. */
export class Lifecycle {
  state: HostState = 'created';
  readonly startedAt = new Date();
  /** Plugin ids whose start hook has finished. */
  readonly startedPlugins: string[] = [];
  /** The HTTP request listener, once the host has built it: a second listener (HTTPS) serves the same app. */
  app: AppListener | null = null;
  /** The HTTP port, once listening (0 in tests picks a free one). */
  httpPort = 0;

  get ready(): boolean {
    return this.state === 'running';
  }
}
