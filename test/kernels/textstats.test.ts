// The test of the README's example kernel (test/fixtures/kernels/textstats).
import { expect } from 'chai';
import type { TestHost } from '../helpers/host';
import { startMeshHost } from '../core/mesh-helpers';

describe('example kernel: textstats', () => {
  let t: TestHost;
  before(async () => {
    t = await startMeshHost(['textstats']);
  });
  after(() => t.stop());

  it('is discovered from its folder and runs on its own worker thread', async () => {
    const r = await t.request('POST', '/kernels/textstats/tasks/top_words', { body: { text: 'the cat and the hat and the bat', top: 2 } });
    expect(r.status).to.equal(200);
    expect(r.body.output).to.deep.equal({ words: 8, top: [{ word: 'the', count: 3 }, { word: 'and', count: 2 }] });
    const empty = await t.request('POST', '/kernels/textstats/tasks/top_words', { body: { text: '...' } });
    expect(empty.status).to.equal(422);
    expect(empty.body.detail).to.deep.equal([{ loc: ['body', 'text'], msg: 'the text has no words', type: 'value_error' }]);
  });
});
