import { z } from 'zod';
import { NotFound } from '../../../core/errors';
import { fromRow } from './events';
import type { EventStore } from './store';

/** The most spans one trace query returns (a larger trace says `truncated`). */
export const MAX_TRACE_SPANS = 5000;

// A type, not an interface, so that it fits the loose children schema.
export type SpanNode = {
  span_id: string;
  parent_span_id: string | null;
  type: string;
  name: string;
  status: string;
  start: string;
  end: string;
  duration_ms: number;
  event: Record<string, unknown>;
  children: SpanNode[];
};

// Children have the same shape; the schema names them loosely because the OpenAPI
// generator does not follow recursive schemas.
const spanNode = z.object({
  span_id: z.string(),
  parent_span_id: z.string().nullable(),
  type: z.string(),
  name: z.string(),
  status: z.string(),
  start: z.string(),
  end: z.string(),
  duration_ms: z.number(),
  event: z.record(z.string(), z.unknown()),
  children: z.array(z.record(z.string(), z.unknown())).describe('child spans, each of this same shape'),
});

export const traceSchema = z.object({
  trace_id: z.string(),
  tenant_id: z.string(),
  span_count: z.number(),
  start: z.string(),
  end: z.string(),
  duration_ms: z.number(),
  truncated: z.boolean(),
  spans: z.array(spanNode),
});

type TraceOut = Omit<z.infer<typeof traceSchema>, 'spans'> & { spans: SpanNode[] };

/**
 * One trace as a tree: each span with its children (oldest first). A span whose parent
 * was never ingested is a root, so a partial trace still shows every span.
 */
export async function traceTree(store: EventStore, tenantId: string, traceId: string): Promise<TraceOut> {
  const rows = await store.trace(tenantId, traceId.toLowerCase(), MAX_TRACE_SPANS);
  if (!rows.length) throw new NotFound(`No trace ${traceId}`);
  const truncated = rows.length > MAX_TRACE_SPANS;
  const nodes = new Map<string, SpanNode>();
  const list: SpanNode[] = [];
  for (const r of rows.slice(0, MAX_TRACE_SPANS)) {
    const startMs = Date.parse(r.ts);
    const duration = r.duration_ms === null ? 0 : Number(r.duration_ms);
    const node: SpanNode = {
      span_id: r.span_id,
      parent_span_id: r.parent_span_id,
      type: r.type,
      name: r.name,
      status: r.status,
      start: r.ts,
      end: new Date(startMs + duration).toISOString(),
      duration_ms: duration,
      event: fromRow(r),
      children: [],
    };
    list.push(node);
    // Two events with one span id (a pipeline bug) keep the first as the tree node.
    if (!nodes.has(r.span_id)) nodes.set(r.span_id, node);
  }
  const roots: SpanNode[] = [];
  for (const node of list) {
    const parent = node.parent_span_id ? nodes.get(node.parent_span_id) : undefined;
    if (parent && parent !== node && !isAncestor(node, parent, nodes)) parent.children.push(node);
    else roots.push(node);
  }
  const start = Math.min(...list.map((n) => Date.parse(n.start)));
  const end = Math.max(...list.map((n) => Date.parse(n.end)));
  return {
    trace_id: traceId.toLowerCase(),
    tenant_id: tenantId,
    span_count: list.length,
    start: new Date(start).toISOString(),
    end: new Date(end).toISOString(),
    duration_ms: end - start,
    truncated,
    spans: roots,
  };
}

/** True when `node` is already above `parent` (a cycle in the given parent ids). */
function isAncestor(node: SpanNode, parent: SpanNode, nodes: Map<string, SpanNode>): boolean {
  let cur: SpanNode | undefined = parent;
  for (let i = 0; cur && i < MAX_TRACE_SPANS; i++) {
    if (cur === node) return true;
    cur = cur.parent_span_id ? nodes.get(cur.parent_span_id) : undefined;
  }
  return false;
}
