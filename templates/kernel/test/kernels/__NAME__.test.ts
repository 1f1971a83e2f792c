// test/kernels/__NAME__.test.ts: the kernel through the real host, over HTTP.
import { expect } from 'chai';
import kernelsPlugin from '../../plugins/kernels';
import { startHost, type TestHost } from '../helpers/host';

describe('kernel __NAME__', () => {
  let t: TestHost;
  before(async () => {
    // Only this kernel's workers start: the host stays light.
    t = await startHost({ plugins: [kernelsPlugin], config: { mesh: { only: ['__NAME__'] } } });
  });
  after(() => t.stop());

  const ratio = (body: unknown, token?: string | null) => t.request('POST', '/kernels/__NAME__/tasks/ratio', { body, token });

  it('runs the task on a worker thread', async () => {
    const r = await ratio({ numerator: 3, denominator: 4 });
    expect(r.status).to.equal(200);
    expect(r.body).to.include({ domain: '__NAME__', task: 'ratio' });
    expect(r.body.output).to.deep.equal({ ratio: 0.75 });
  });

  it('answers 422 for input the schema or the task refuses', async () => {
    const zero = await ratio({ numerator: 1, denominator: 0 });
    expect(zero.status).to.equal(422);
    expect(zero.body).to.deep.equal({ detail: [{ loc: ['body', 'denominator'], msg: 'the denominator is zero', type: 'value_error' }], code: 'DIVISION_BY_ZERO' });
    const bad = await ratio({ numerator: '3' });
    expect(bad.status).to.equal(422);
    expect(bad.body.detail).to.deep.equal([
      { loc: ['body', 'numerator'], msg: 'Input should be a valid number, unable to parse string as a number', type: 'float_parsing' },
      { loc: ['body', 'denominator'], msg: 'Field required', type: 'missing' },
    ]);
  });

  it('needs a member: 401 without a token, 403 for a viewer', async () => {
    expect((await ratio({ numerator: 1, denominator: 2 }, null)).status).to.equal(401);
    const viewer = (await t.userToken('viewer')).token;
    expect((await ratio({ numerator: 1, denominator: 2 }, viewer)).status).to.equal(403);
  });
});
