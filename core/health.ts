export type HealthState = 'healthy' | 'degraded' | 'unhealthy' | 'unknown' | 'disabled';

export interface ComponentHealth {
  status: HealthState;
  /** Measured facts behind the status (latency, counts, reasons). */
  detail: Record<string, unknown>;
}

type Probe = () => Promise<ComponentHealth>;

/** Components report their health here; `/health/` asks every one of them. */
export class HealthRegistry {
  private readonly probes = new Map<string, Probe>();

  /** Registers (or replaces) the probe of a component. */
  register(name: string, probe: Probe): void {
    this.probes.set(name, probe);
  }

  names(): string[] {
    return [...this.probes.keys()];
  }

  async check(name: string): Promise<ComponentHealth | null> {
    const probe = this.probes.get(name);
    if (!probe) return null;
    try {
      return await probe();
    } catch (err) {
      return { status: 'unhealthy', detail: { error: (err as Error).message } };
    }
  }

  async checkAll(): Promise<Record<string, ComponentHealth>> {
    const names = this.names();
    const results = await Promise.all(names.map((n) => this.check(n)));
    return Object.fromEntries(names.map((n, i) => [n, results[i]!]));
  }
}

/** Overall state: healthy unless some component is degraded or unhealthy. */
export function overall(components: Record<string, ComponentHealth>): 'healthy' | 'degraded' {
  return Object.values(components).some((c) => c.status === 'degraded' || c.status === 'unhealthy') ? 'degraded' : 'healthy';
}

/** Times an async probe, in milliseconds with two decimals. */
export async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const start = process.hrtime.bigint();
  const value = await fn();
  return { value, ms: Math.round(Number(process.hrtime.bigint() - start) / 1e4) / 100 };
}
