export type HostState = 'created' | 'starting' | 'running' | 'stopping' | 'stopped';

/** Where the host is in its life; readiness checks and shutdown read it. */
export class Lifecycle {
  state: HostState = 'created';
  readonly startedAt = new Date();
  /** Plugin ids whose start hook has finished. */
  readonly startedPlugins: string[] = [];

  get ready(): boolean {
    return this.state === 'running';
  }
}
