import type { Request, Response } from 'express';
import type { Config } from '../config';
import { TooManyRequests } from '../errors';
import type { BeforeHook } from '../http/pipeline';
import type { Logger } from '../logger';
import type { RouteDef } from '../plugin';
import type { Caller } from '../roles';
import { Buckets, type Take } from './buckets';

export type { Take };

/** How the limiter learns a tenant's plan (the database in the host; a constant in benches). */
export type PlanLookup = (tenantId: string) => Promise<string | null>;

/** The plan used when a tenant's plan is unknown or no longer configured. */
export const FALLBACK_PLAN = 'free';

/**
 * Request budgets: per tenant by plan for every authenticated request, and per client
 * address for unauthenticated calls of routes that ask for it (login, register, reset,
 * verify). Over budget answers 429 at once; nothing is queued.
 */
export class RateLimiter {
  private readonly buckets: Buckets;
  private readonly plans = new Map<string, { plan: Promise<string>; until: number }>();
  /** The same plans once known, for the refusal that needs no waiting (see hook). */
  private readonly knownPlans = new Map<string, { plan: string; until: number }>();
  private readonly windowSeconds: number;
  /** Told once per tenant and window when a tenant is first refused (the security plugin's 429 bursts). */
  onRefuse: ((r: { tenant_id: string; plan: string; limit: number; reset_at: string }) => void) | null = null;
  /** tenant -> end of the window its refusal was reported for (bounded by the number of tenants). */
  private readonly reported = new Map<string, number>();

  /** Live budgets and remembered tenant plans (for the cache gauges). */
  get sizes(): { buckets: number; plans: number } {
    return { buckets: this.buckets.size, plans: this.plans.size };
  }

  constructor(
    private readonly config: Config,
    private readonly lookup: PlanLookup,
    private readonly log: Logger,
  ) {
    this.windowSeconds = config.limits.windowSeconds;
    this.buckets = new Buckets(this.windowSeconds * 1000, config.limits.redisPrefix, config.redis.url, log);
  }

  /** Waits (bounded) for the shared store; false when it is not reachable yet. */
  ready(ms: number): Promise<boolean> {
    return this.buckets.ready(ms);
  }

  /** True when the budgets live in Redis and are shared by every host. */
  get shared(): boolean {
    return this.buckets.shared;
  }

  /** The tenant's plan name, cached for `limits.planCacheMs`. */
  planOf(tenantId: string): Promise<string> {
    const now = Date.now();
    const hit = this.plans.get(tenantId);
    if (hit && hit.until > now) return hit.plan;
    const until = now + this.config.limits.planCacheMs;
    const plan = this.lookup(tenantId).then((p) => (p && this.config.plans[p] ? p : FALLBACK_PLAN));
    void plan.then((p) => this.plans.get(tenantId)?.plan === plan && this.knownPlans.set(tenantId, { plan: p, until }), () => undefined);
    this.plans.set(tenantId, { plan, until });
    plan.catch(() => this.plans.delete(tenantId));
    return plan;
  }

  /** A plan changed on this host: the new budget applies from the next request. */
  planChanged(tenantId: string): void {
    this.plans.delete(tenantId);
    this.knownPlans.delete(tenantId);
  }

  private tenantKey(tenantId: string, plan: string): string {
    // The plan and limit are part of the key, so a plan change starts a fresh budget at once.
    return `t:${tenantId}:${plan}:${this.config.plans[plan].requestsPerMinute}`;
  }

  /** Takes one request from the caller's tenant budget. */
  async takeTenant(tenantId: string): Promise<{ take: Take; policy: string }> {
    // A plan known and still fresh is used without waiting on its promise.
    const known = this.knownPlans.get(tenantId);
    const plan = known && known.until > Date.now() && this.config.plans[known.plan] ? known.plan : await this.planOf(tenantId);
    const limit = this.config.plans[plan].requestsPerMinute;
    return { take: await this.buckets.take(this.tenantKey(tenantId, plan), limit), policy: plan };
  }

  /**
   * Takes one request from a budget a plugin names (an API key's own budget): `limit` a window
   * of `limits.windowSeconds`, shared through Redis like the tenants' when it is configured.
   */
  async takeNamed(name: string, limit: number): Promise<Take> {
    return this.buckets.take(`n:${name}:${limit}`, limit);
  }

  /** The length of every budget's window, seconds. */
  get window(): number {
    return this.windowSeconds;
  }

  async takeAddress(address: string): Promise<{ take: Take; policy: string }> {
    const limit = this.config.limits.clientAddressPerWindow;
    return { take: await this.buckets.take(`a:${address}:${limit}`, limit), policy: 'address' };
  }

  /** Requests that take no budget here (a task a peer host forwarded, counted where it arrived). */
  exempt: (req: Request) => boolean = () => false;

  /**
   * The pipeline hook: runs after authentication, before validation. A tenant already over
   * budget in this window is refused at once, without a promise: that is most of what a
   * flood of refused requests costs.
   */
  readonly hook: BeforeHook = (req: Request, res: Response, route: RouteDef, caller: Caller | null) => {
    if (caller && req.headers['x-pc-forwarded'] !== undefined && this.exempt(req)) return;
    if (caller) {
      const now = Date.now();
      const known = this.knownPlans.get(caller.tenantId);
      const until = known && known.until > now && this.config.plans[known.plan] ? this.buckets.blockedUntil(this.tenantKey(caller.tenantId, known.plan), now) : 0;
      if (until) this.refuse(res, { allowed: false, limit: this.config.plans[known!.plan].requestsPerMinute, remaining: 0, resetAt: until }, known!.plan, caller.tenantId);
    }
    return this.take(req, res, route, caller);
  };

  private async take(req: Request, res: Response, route: RouteDef, caller: Caller | null): Promise<void> {
    let outcome: { take: Take; policy: string };
    try {
      if (caller) outcome = await this.takeTenant(caller.tenantId);
      else if (route.limitByAddress) outcome = await this.takeAddress(req.ip ?? req.socket.remoteAddress ?? 'unknown');
      else return;
    } catch (err) {
      // Only the plan lookup can fail here (the database); serve rather than refuse everyone.
      this.log.warn({ err: (err as Error).message }, 'rate limit check failed; request let through');
      return;
    }
    const { take, policy } = outcome;
    if (!take.allowed) this.refuse(res, take, policy, caller?.tenantId);
    setRateLimitHeaders(res, take, policy, this.windowSeconds);
  }

  private refuse(res: Response, take: Take, policy: string, tenantId?: string): never {
    setRateLimitHeaders(res, take, policy, this.windowSeconds);
    // One report per tenant and window keeps a flood of refusals from costing more than a map lookup.
    if (tenantId && this.onRefuse && (this.reported.get(tenantId) ?? 0) < take.resetAt) {
      this.reported.set(tenantId, take.resetAt);
      this.onRefuse({ tenant_id: tenantId, plan: policy, limit: take.limit, reset_at: new Date(take.resetAt).toISOString() });
    }
    const wait = secondsUntil(take.resetAt);
    throw new TooManyRequests(`Rate limit exceeded: ${take.limit} requests per ${this.windowSeconds} s (${policy}); retry in ${wait} s`, wait);
  }

  async close(): Promise<void> {
    await this.buckets.close();
  }
}

function secondsUntil(epochMs: number): number {
  return Math.max(1, Math.ceil((epochMs - Date.now()) / 1000));
}

/**
 * X-RateLimit-* (Reset in UTC epoch seconds) and the IETF draft fields
 * (draft-ietf-httpapi-ratelimit-headers: RateLimit-Policy `"<name>";q=<quota>;w=<window s>`,
 * RateLimit `"<name>";r=<remaining>;t=<seconds to reset>`).
 */
export function setRateLimitHeaders(res: Response, take: Take, policy: string, windowSeconds: number): void {
  const resetSeconds = Math.max(0, Math.ceil((take.resetAt - Date.now()) / 1000));
  res.setHeader('X-RateLimit-Limit', String(take.limit));
  res.setHeader('X-RateLimit-Remaining', String(take.remaining));
  res.setHeader('X-RateLimit-Reset', String(Math.ceil(take.resetAt / 1000)));
  res.setHeader('RateLimit-Policy', `"${policy}";q=${take.limit};w=${windowSeconds}`);
  res.setHeader('RateLimit', `"${policy}";r=${take.remaining};t=${resetSeconds}`);
}
