import fs from 'node:fs';
import { expect } from 'chai';
import { currentDocument, schemaText, SCHEMA_FILE, streamDocument, STREAM_SCHEMA_FILE } from '../tools/client-gen';

// packages/client's types are generated (make client); a route, schema or stream message
// changed without regenerating them fails here.
describe('typed client: generated types match the documents the code produces', function () {
  this.timeout(120_000);

  it('src/schema.ts is the OpenAPI document of the host, as openapi-typescript types it', async () => {
    const expected = await schemaText(await currentDocument());
    // Not chai's equal: a diff of two 1.7 MB strings is unreadable; the first differing line is enough.
    const actual = fs.readFileSync(SCHEMA_FILE, 'utf8');
    expect(firstDifference(actual, expected), 'packages/client/src/schema.ts is out of date: run `make client`').to.equal(null);
  });

  it('src/stream-schema.ts is the AsyncAPI messages of /ops/stream', async () => {
    const expected = await schemaText(streamDocument());
    const actual = fs.readFileSync(STREAM_SCHEMA_FILE, 'utf8');
    expect(firstDifference(actual, expected), 'packages/client/src/stream-schema.ts is out of date: run `make client`').to.equal(null);
  });
});

function firstDifference(actual: string, expected: string): string | null {
  if (actual === expected) return null;
  const a = actual.split('\n');
  const e = expected.split('\n');
  const i = a.findIndex((line, n) => line !== e[n]);
  const at = i === -1 ? a.length : i;
  return `line ${at + 1}: committed ${JSON.stringify(a[at] ?? '<end>')}, generated ${JSON.stringify(e[at] ?? '<end>')}`;
}
