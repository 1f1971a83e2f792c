// The copilot without a language model: a small intent parser for the common requests. It
// matches a pattern per tool and extracts the arguments; the confidence is the share of the
// message's words that the matched pattern accounts for (keywords and arguments), so a terse
// command scores near 1 and a long message with one matching phrase scores low.

export interface Intent {
  tool: string;
  args: Record<string, unknown>;
  confidence: number;
  /** The words of the message the pattern used. */
  matched: string;
}

const NODE = '([a-z][a-z0-9-]*-\\d+)';
const PATTERNS: Array<{ tool: string; re: RegExp; args: (m: RegExpMatchArray, kernels: string[], text: string) => Record<string, unknown> }> = [
  { tool: 'drain_node', re: new RegExp(`\\bdrain(?:\\s+the)?(?:\\s+mesh)?\\s+node\\s+${NODE}`, 'i'), args: (m) => ({ node_id: m[1]!.toLowerCase() }) },
  { tool: 'pause_node', re: new RegExp(`\\bpause(?:\\s+the)?(?:\\s+mesh)?\\s+node\\s+${NODE}`, 'i'), args: (m) => ({ node_id: m[1]!.toLowerCase() }) },
  { tool: 'resume_node', re: new RegExp(`\\bresume(?:\\s+the)?(?:\\s+mesh)?\\s+node\\s+${NODE}`, 'i'), args: (m) => ({ node_id: m[1]!.toLowerCase() }) },
  { tool: 'node_state', re: new RegExp(`\\b(?:state|status|health)\\s+of(?:\\s+the)?\\s+node\\s+${NODE}|\\bnode\\s+${NODE}\\s+(?:state|status|health)|\\bhow\\s+is\\s+node\\s+${NODE}`, 'i'), args: (m) => ({ node_id: (m[1] ?? m[2] ?? m[3])!.toLowerCase() }) },
  { tool: 'run_workflow', re: /\brun\s+(?:the\s+)?workflow\s+"?([^"]+?)"?\s*$/i, args: (m) => ({ workflow: m[1]!.trim() }) },
  { tool: 'list_kernels', re: /\b(?:list|show|which|what)\b(?:\s+\w+){0,3}?\s+kernels\b|^kernels\??$/i, args: () => ({}) },
  { tool: 'open_incidents', re: /\b(?:open\s+|active\s+|current\s+)?incidents\b/i, args: () => ({}) },
  { tool: 'slo_burn', re: /\b(?:slo|error\s+budget)(?:\s+burn(?:\s+rate)?)?\b|\bburn\s+rate\b/i, args: (_m, kernels, text) => { const k = kernels.find((x) => new RegExp(`\\b${x}\\b`, 'i').test(text)); return k ? { kernel: k } : {}; } },
  { tool: 'costs', re: /\b(?:costs?|spend(?:ing)?|spent)\b/i, args: () => ({}) },
];

const words = (s: string) => s.toLowerCase().match(/[a-z0-9_-]+/g) ?? [];
const FILLER = new Set(['please', 'the', 'a', 'an', 'me', 'us', 'can', 'could', 'you', 'now', 'for', 'of', 'is', 'are', 'what', 'show', 'tell', 'about', 'our']);

export function parseIntent(message: string, kernels: string[]): Intent | null {
  for (const p of PATTERNS) {
    const m = message.match(p.re);
    if (!m) continue;
    const args = p.args(m, kernels, message);
    const used = new Set([...words(m[0]), ...Object.values(args).flatMap((v) => words(String(v)))]);
    // Polite filler words neither add nor take away: they are left out of both counts.
    const all = words(message).filter((w) => !FILLER.has(w) || used.has(w));
    const covered = all.filter((w) => used.has(w)).length;
    return { tool: p.tool, args, confidence: all.length ? Math.round((covered / all.length) * 1000) / 1000 : 0, matched: m[0] };
  }
  return null;
}

export const CONFIRM = /^\s*(?:confirm(?:ed)?|yes|go ahead|do it|proceed)\b[.!]?\s*$/i;
export const CANCEL = /^\s*(?:cancel|no|abort|stop)\b[.!]?\s*$/i;

export const CAPABILITIES = 'list the kernels, show a node\'s state, drain, pause or resume a node, list open incidents, show SLO burn, show costs, and run a workflow by name';
