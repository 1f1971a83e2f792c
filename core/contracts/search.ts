import { createServiceRef } from '../plugin';

/**
 * The platform's full-text search index (plugin `search`). Other plugins add, update and
 * remove their objects here so that GET /search/ finds them; the search plugin itself
 * indexes what the event bus tells it (incidents, workflows, chaos experiments, kernels, nodes).
 */
export interface SearchDocument {
  /** Object kind, e.g. `incident`, `workflow`, `kernel`, `document`: lowercase, the type filter. */
  type: string;
  /** The object's id within its type. */
  id: string;
  /** Owning tenant; null for platform-wide objects that every signed-in user may see. */
  tenant_id: string | null;
  title: string;
  /** Further text to match (description, content); kept up to 64 KiB. */
  body?: string;
  /** Where the object is read in the API, e.g. `/ops/incidents/<id>`. */
  url?: string | null;
  /** When the object last changed (ISO 8601); the time of indexing when not given. */
  updated_at?: string;
}

export interface SearchHit {
  type: string;
  id: string;
  tenant_id: string | null;
  title: string;
  url: string | null;
  updated_at: string;
  /** Higher is better; comparable within one answer only. */
  score: number;
  /** The matched words wrapped in <mark>…</mark>. */
  highlights: { title: string; body: string };
}

export interface SearchQuery {
  q: string;
  tenantId: string;
  types?: string[];
  limit: number;
  offset: number;
}

export interface SearchIndex {
  put(doc: SearchDocument): Promise<void>;
  remove(type: string, id: string): Promise<void>;
  search(query: SearchQuery): Promise<{ hits: SearchHit[]; total: number }>;
  /** The engine answering: `sqlite-fts5` or `postgresql-tsvector`. */
  readonly engine: string;
}

export const searchIndexRef = createServiceRef<SearchIndex>('search.index');
