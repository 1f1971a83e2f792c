/** A HEAD request with a 2 s limit: whether an outside system answers, and how fast. */
export async function probe(url: string): Promise<{ reachable: boolean; latency_ms: number | null; detail: string }> {
  const t0 = performance.now();
  try {
    const res = await fetch(url, { method: 'HEAD', signal: AbortSignal.timeout(2000) });
    return { reachable: true, latency_ms: Math.round(performance.now() - t0), detail: `answered ${res.status}` };
  } catch (err) {
    return { reachable: false, latency_ms: null, detail: (err as Error).message };
  }
}
