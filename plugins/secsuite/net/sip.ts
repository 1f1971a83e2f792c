/** One SIP message (RFC 3261 §7) as far as the detections need it. */
export interface SipMessage {
  method: string | null;
  status: number | null;
  request_uri: string | null;
  call_id: string | null;
  cseq_method: string | null;
  from_uri: string | null;
  to_uri: string | null;
  user_agent: string | null;
}

/** Compact header forms (RFC 3261 §7.3.3). */
const COMPACT: Record<string, string> = { i: 'call-id', f: 'from', t: 'to', v: 'via', m: 'contact', l: 'content-length', c: 'content-type', k: 'supported' };

/** Parses the start line and headers; throws with the reason when the text is not a SIP message. */
export function parseSip(raw: string): SipMessage {
  const head = raw.split(/\r?\n\r?\n/, 1)[0];
  const lines = head.split(/\r?\n/);
  const start = lines.shift()?.trim() ?? '';
  let method: string | null = null;
  let status: number | null = null;
  let requestUri: string | null = null;
  const resp = /^SIP\/2\.0\s+(\d{3})(?:\s.*)?$/i.exec(start);
  const req = /^([A-Z]+)\s+(\S+)\s+SIP\/2\.0$/.exec(start);
  if (resp) status = Number(resp[1]);
  else if (req) {
    method = req[1];
    requestUri = req[2];
  } else throw new Error('the start line is neither a SIP request nor a SIP/2.0 status line');
  const headers = new Map<string, string>();
  let last: string | null = null;
  for (const line of lines) {
    if (/^[ \t]/.test(line) && last) {
      headers.set(last, `${headers.get(last)} ${line.trim()}`); // folded continuation
      continue;
    }
    const i = line.indexOf(':');
    if (i <= 0) throw new Error(`malformed header line "${line.slice(0, 60)}"`);
    const name = line.slice(0, i).trim().toLowerCase();
    last = COMPACT[name] ?? name;
    if (!headers.has(last)) headers.set(last, line.slice(i + 1).trim());
  }
  const cseq = headers.get('cseq');
  if (!headers.get('call-id') || !cseq) throw new Error('Call-ID and CSeq headers are required');
  const cseqMethod = /^\d+\s+([A-Z]+)$/.exec(cseq)?.[1] ?? null;
  if (!cseqMethod) throw new Error(`malformed CSeq "${cseq}"`);
  return {
    method,
    status,
    request_uri: requestUri,
    call_id: headers.get('call-id')!,
    cseq_method: cseqMethod,
    from_uri: uriOf(headers.get('from')),
    to_uri: uriOf(headers.get('to')),
    user_agent: headers.get('user-agent') ?? headers.get('server') ?? null,
  };
}

function uriOf(v?: string): string | null {
  if (!v) return null;
  const angle = /<([^>]+)>/.exec(v);
  return (angle ? angle[1] : v.split(';')[0]).trim();
}

/** User agents of well-known SIP scanners (SIPVicious and its forks, sipcli, ...). */
export const SCANNER_AGENTS = [/friendly-scanner/i, /sipvicious/i, /sipcli/i, /sip-scan/i, /sundayddr/i, /iwar/i, /vaxsipuseragent/i, /pplsip/i, /sipsak/i];

/** An international number in a request URI or To: `+<digits>` or `00<digits>`. */
export function internationalNumber(uri: string | null): string | null {
  const user = uri ? /^(?:sips?|tel):([^@;]+)/i.exec(uri)?.[1] ?? null : null;
  if (!user) return null;
  const m = /^(?:\+|00)(\d{7,15})$/.exec(user.replace(/[-. ()]/g, ''));
  return m ? m[1] : null;
}

export const THRESHOLDS = {
  /** OPTIONS requests from one source within a minute that make a scan. */
  optionsPerMinute: 20,
  /** 401/403 answers to one source's REGISTERs within five minutes that make a brute force. */
  registerFailures: 10,
  /** Distinct international numbers one source calls within ten minutes that make toll fraud. */
  tollNumbers: 5,
};
