/**
 * Polls until `fn` returns a truthy value, and returns it (bus handlers, deliveries, worker
 * threads and experiments work off the caller's stack). The one polling helper of the tests:
 * never a fixed sleep. Fails after `ms`, naming `what`.
 */
export async function eventually<T>(fn: () => T | Promise<T>, ms = 5000, what = 'condition'): Promise<Exclude<T, null | undefined | false>> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v as Exclude<T, null | undefined | false>;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
