import type { Migration } from '../../core/db';
import { isPostgres, type Db } from '../../core/db';
import type { EventBus } from '../../core/events';
import type { Logger } from '../../core/logger';
import type { Mesh } from '../../core/mesh/mesh';
import { feedIndex } from './feed';
import type { SearchDocument, SearchHit, SearchIndex, SearchQuery } from '../../core/contracts/search';

const MAX_BODY = 64 * 1024;

// One table of documents on both databases; SQLite adds an FTS5 table beside it, PostgreSQL a
// generated tsvector column with a GIN index. The 'simple' configuration (no stemming, no stop
// words) matches FTS5's unicode61 tokenizer, so both engines find the same words.
export const searchMigrations: Migration[] = [
  {
    name: '001_search_documents',
    async up(db) {
      await db.schema.createTable('search_documents', (t) => {
        t.string('doc_key', 200).primary();
        t.string('type', 40).notNullable();
        t.string('id', 150).notNullable();
        t.string('tenant_id', 64);
        t.text('title').notNullable();
        t.text('body').notNullable();
        t.text('url');
        t.string('updated_at', 32).notNullable();
        t.index(['tenant_id', 'type']);
      });
      if (isPostgres(db)) {
        await db.raw(`ALTER TABLE search_documents ADD COLUMN tsv tsvector GENERATED ALWAYS AS
          (setweight(to_tsvector('simple', title), 'A') || setweight(to_tsvector('simple', body), 'B')) STORED`);
        await db.raw('CREATE INDEX search_documents_tsv ON search_documents USING GIN (tsv)');
      } else {
        await db.raw("CREATE VIRTUAL TABLE search_fts USING fts5(doc_key UNINDEXED, title, body, tokenize = 'unicode61')");
      }
    },
  },
];

/** Words of a query: letters and digits only, so no query syntax of either engine leaks through. */
export function words(q: string): string[] {
  return [...q.toLowerCase().matchAll(/[\p{L}\p{N}_]+/gu)].map((m) => m[0]).slice(0, 16);
}

export class SqlSearchIndex implements SearchIndex {
  readonly engine: string;
  private feed: { stop(): void; idle(): Promise<void> } | null = null;

  constructor(
    private readonly db: Db,
    private readonly sources?: { events: EventBus; mesh: Mesh; log: Logger },
  ) {
    this.engine = isPostgres(db) ? 'postgresql-tsvector' : 'sqlite-fts5';
  }

  /** Starts indexing what the bus announces (see feed.ts). */
  start(): void {
    if (this.sources) this.feed = feedIndex(this, this.sources.events, this.sources.mesh, this.sources.log);
  }

  async stop(): Promise<void> {
    this.feed?.stop();
    await this.feed?.idle();
  }

  async put(doc: SearchDocument): Promise<void> {
    const key = `${doc.type}:${doc.id}`;
    const row = {
      doc_key: key,
      type: doc.type,
      id: doc.id,
      tenant_id: doc.tenant_id,
      title: doc.title.slice(0, 1000),
      body: (doc.body ?? '').slice(0, MAX_BODY),
      url: doc.url ?? null,
      updated_at: doc.updated_at ?? new Date().toISOString(),
    };
    await this.db.transaction(async (trx) => {
      await trx('search_documents').insert(row).onConflict('doc_key').merge();
      if (!isPostgres(this.db)) {
        await trx('search_fts').where({ doc_key: key }).delete();
        await trx('search_fts').insert({ doc_key: key, title: row.title, body: row.body });
      }
    });
  }

  async remove(type: string, id: string): Promise<void> {
    const key = `${type}:${id}`;
    await this.db.transaction(async (trx) => {
      await trx('search_documents').where({ doc_key: key }).delete();
      if (!isPostgres(this.db)) await trx('search_fts').where({ doc_key: key }).delete();
    });
  }

  async search(query: SearchQuery): Promise<{ hits: SearchHit[]; total: number }> {
    const w = words(query.q);
    if (!w.length) return { hits: [], total: 0 };
    return isPostgres(this.db) ? this.searchPg(w, query) : this.searchSqlite(w, query);
  }

  private visible(q: SearchQuery, alias: string): [string, string[]] {
    let sql = `(${alias}.tenant_id = ? OR ${alias}.tenant_id IS NULL)`;
    const args: string[] = [q.tenantId];
    if (q.types?.length) {
      sql += ` AND ${alias}.type IN (${q.types.map(() => '?').join(', ')})`;
      args.push(...q.types);
    }
    return [sql, args];
  }

  private async searchSqlite(w: string[], q: SearchQuery) {
    // Every word must match, the last one as a prefix (search as you type); title counts 10x.
    const match = w.map((x, i) => `"${x}"${i === w.length - 1 ? '*' : ''}`).join(' ');
    const [vis, args] = this.visible(q, 'd');
    const from = `FROM search_fts f JOIN search_documents d ON d.doc_key = f.doc_key WHERE search_fts MATCH ? AND ${vis}`;
    // One transaction (FTS5 functions cannot share a statement with a window count): the page
    // and the total see the same index, whatever is written meanwhile.
    return this.db.transaction(async (trx) => {
      const rows = await trx.raw(
        `SELECT d.type, d.id, d.tenant_id, d.title, d.url, d.updated_at, -bm25(search_fts, 0, 10.0, 1.0) AS score,
           highlight(search_fts, 1, '<mark>', '</mark>') AS h_title, snippet(search_fts, 2, '<mark>', '</mark>', '…', 24) AS h_body
         ${from} ORDER BY score DESC, d.doc_key LIMIT ? OFFSET ?`,
        [match, ...args, q.limit, q.offset],
      );
      const [{ n }] = await trx.raw(`SELECT count(*) AS n ${from}`, [match, ...args]);
      return { hits: (rows as Array<Record<string, unknown>>).map(toHit), total: Number(n) };
    });
  }

  private async searchPg(w: string[], q: SearchQuery) {
    const tsq = w.map((x, i) => `'${x}'${i === w.length - 1 ? ':*' : ''}`).join(' & ');
    const [vis, args] = this.visible(q, 'd');
    const from = `FROM search_documents d, to_tsquery('simple', ?) q WHERE d.tsv @@ q AND ${vis}`;
    const opts = 'StartSel=<mark>, StopSel=</mark>, HighlightAll=true';
    const res = await this.db.raw(
      `SELECT d.type, d.id, d.tenant_id, d.title, d.url, d.updated_at, ts_rank(d.tsv, q) AS score, count(*) OVER () AS total_count,
         ts_headline('simple', d.title, q, '${opts}') AS h_title,
         ts_headline('simple', d.body, q, 'StartSel=<mark>, StopSel=</mark>, MaxWords=24, MinWords=8') AS h_body
       ${from} ORDER BY score DESC, d.doc_key LIMIT ? OFFSET ?`,
      [tsq, ...args, q.limit, q.offset],
    );
    const list = res.rows as Array<Record<string, unknown>>;
    const total = list.length ? Number(list[0]!.total_count) : q.offset ? Number((await this.db.raw(`SELECT count(*) AS n ${from}`, [tsq, ...args])).rows[0].n) : 0;
    return { hits: list.map(toHit), total };
  }
}

function toHit(r: Record<string, unknown>): SearchHit {
  return {
    type: String(r.type),
    id: String(r.id),
    tenant_id: (r.tenant_id as string | null) ?? null,
    title: String(r.title),
    url: (r.url as string | null) ?? null,
    updated_at: String(r.updated_at),
    score: Math.round(Number(r.score) * 1e6) / 1e6,
    highlights: { title: typeof r.h_title === 'string' ? r.h_title : '', body: typeof r.h_body === 'string' ? r.h_body : '' },
  };
}
