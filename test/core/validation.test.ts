// The 422 wording: FastAPI's (pydantic's) error types and messages for each zod issue kind,
// on declared routes and on kernel task inputs alike; only an absent key is `missing`.
import { expect } from 'chai';
import { z } from 'zod';
import { definePlugin } from '../../core/plugin';
import { MESH_PLUGINS, BUILTIN_KERNELS, FIXTURE_KERNELS } from './mesh-helpers';
import { anyRoute as route, startHost, type TestHost } from '../helpers/host';

const shapes = definePlugin({
  id: 'shapes',
  prefix: '/shapes',
  deps: {},
  routes: () => [
    route({
      method: 'post',
      path: '/items',
      summary: 'a body with one field of each kind',
      access: 'public',
      query: z.object({ n: z.coerce.number().int().min(1).optional(), x: z.coerce.number().optional() }),
      body: z.strictObject({
        name: z.string().min(2).max(5),
        count: z.number().int().gte(1).lt(10),
        ratio: z.number().gt(0).lte(1).optional(),
        flag: z.boolean().optional(),
        tags: z.array(z.string()).min(1).max(2).optional(),
        meta: z.object({ a: z.number() }).optional(),
        labels: z.record(z.string(), z.string()).optional(),
        mode: z.enum(['fast', 'slow', 'off']).optional(),
        kind: z.literal('exact').optional(),
        none: z.null().optional(),
        id: z.uuid().optional(),
        code: z.string().regex(/^[a-z]+$/).optional(),
        slug: z.string().regex(/^[a-z-]+$/, 'a slug such as my-item').optional(),
        step: z.number().multipleOf(5).optional(),
        shape: z.discriminatedUnion('type', [z.object({ type: z.literal('circle'), r: z.number() }), z.object({ type: z.literal('square'), side: z.number() })]).optional(),
      }),
      status: 201,
      handler: ({ body }) => body,
    }),
  ],
});

describe('422 wording (FastAPI error types and messages)', () => {
  let t: TestHost;
  before(async () => {
    t = await startHost({ plugins: [...MESH_PLUGINS, shapes], config: { mesh: { kernelDirs: [BUILTIN_KERNELS, FIXTURE_KERNELS], only: ['faults'], heartbeatMs: 100 } } });
  });
  after(() => t.stop());

  /** The single issue at `loc` of a 422 answer to `body`. */
  async function issue(body: unknown, loc: string, query = '') {
    const r = await t.request('POST', `/shapes/items${query}`, { body });
    expect(r.status, r.text).to.equal(422);
    const found = r.body.detail.filter((d: { loc: unknown[] }) => d.loc.join('.') === loc);
    expect(found, `${loc} in ${r.text}`).to.have.length(1);
    return { ...found[0], all: r.body.detail };
  }
  const ok = { name: 'abc', count: 2 };
  const says = async (patch: Record<string, unknown>, loc: string, type: string, msg: string, query = '') => {
    const { all, ...one } = await issue({ ...ok, ...patch }, loc, query);
    expect(one).to.deep.equal({ loc: loc.split('.').map((p) => (/^\d+$/.test(p) ? Number(p) : p)), type, msg });
    return all;
  };

  it('an absent key is missing; a present one of the wrong type names the type', async () => {
    await says({ name: undefined }, 'body.name', 'missing', 'Field required');
    await says({ name: 5 }, 'body.name', 'string_type', 'Input should be a valid string');
    await says({ name: null }, 'body.name', 'string_type', 'Input should be a valid string');
    await says({ count: 'x' }, 'body.count', 'int_parsing', 'Input should be a valid integer, unable to parse string as an integer');
    await says({ count: 1.5 }, 'body.count', 'int_from_float', 'Input should be a valid integer, got a number with a fractional part');
    await says({ count: true }, 'body.count', 'int_type', 'Input should be a valid integer');
    await says({ ratio: [] }, 'body.ratio', 'float_type', 'Input should be a valid number');
    await says({ ratio: 'x' }, 'body.ratio', 'float_parsing', 'Input should be a valid number, unable to parse string as a number');
    await says({ flag: 1 }, 'body.flag', 'bool_type', 'Input should be a valid boolean');
    await says({ flag: 'yes' }, 'body.flag', 'bool_parsing', 'Input should be a valid boolean, unable to interpret input');
    await says({ tags: 'x' }, 'body.tags', 'list_type', 'Input should be a valid list');
    await says({ tags: [1] }, 'body.tags.0', 'string_type', 'Input should be a valid string');
    await says({ meta: 'x' }, 'body.meta', 'model_attributes_type', 'Input should be a valid dictionary or object to extract fields from');
    await says({ meta: {} }, 'body.meta.a', 'missing', 'Field required');
    await says({ labels: [] }, 'body.labels', 'dict_type', 'Input should be a valid dictionary');
    await says({ none: 0 }, 'body.none', 'none_required', 'Input should be None');
  });

  it('the whole body: missing when absent, a dictionary when of another type', async () => {
    const r = await t.request('POST', '/shapes/items', { body: [1] });
    expect(r.body.detail).to.deep.equal([{ loc: ['body'], msg: 'Input should be a valid dictionary or object to extract fields from', type: 'model_attributes_type' }]);
    const empty = await t.request('POST', '/shapes/items', { body: {} });
    expect(empty.body.detail).to.deep.equal([
      { loc: ['body', 'name'], msg: 'Field required', type: 'missing' },
      { loc: ['body', 'count'], msg: 'Field required', type: 'missing' },
    ]);
  });

  it('enum, literal, sizes, bounds, formats, patterns, extra keys and unions', async () => {
    await says({ mode: 'medium' }, 'body.mode', 'enum', "Input should be 'fast', 'slow' or 'off'");
    await says({ kind: 'rough' }, 'body.kind', 'literal_error', "Input should be 'exact'");
    await says({ name: 'a' }, 'body.name', 'string_too_short', 'String should have at least 2 characters');
    await says({ name: 'abcdef' }, 'body.name', 'string_too_long', 'String should have at most 5 characters');
    await says({ tags: [] }, 'body.tags', 'too_short', 'List should have at least 1 item after validation, not 0');
    await says({ tags: ['a', 'b', 'c'] }, 'body.tags', 'too_long', 'List should have at most 2 items after validation, not 3');
    await says({ count: 0 }, 'body.count', 'greater_than_equal', 'Input should be greater than or equal to 1');
    await says({ count: 10 }, 'body.count', 'less_than', 'Input should be less than 10');
    await says({ ratio: 0 }, 'body.ratio', 'greater_than', 'Input should be greater than 0');
    await says({ ratio: 2 }, 'body.ratio', 'less_than_equal', 'Input should be less than or equal to 1');
    await says({ step: 7 }, 'body.step', 'multiple_of', 'Input should be a multiple of 5');
    await says({ id: 'nope' }, 'body.id', 'uuid_parsing', 'Input should be a valid UUID');
    await says({ code: 'A1' }, 'body.code', 'string_pattern_mismatch', "String should match pattern '^[a-z]+$'");
    // A message the schema's author wrote is kept; the type stays pydantic's.
    await says({ slug: 'A B' }, 'body.slug', 'string_pattern_mismatch', 'a slug such as my-item');
    await says({ extra: 1 }, 'body.extra', 'extra_forbidden', 'Extra inputs are not permitted');
    await says({ shape: { type: 'hexagon' } }, 'body.shape', 'union_tag_invalid', "Input tag 'hexagon' found using 'type' does not match any of the expected tags: 'circle' or 'square'");
    await says({ shape: {} }, 'body.shape', 'union_tag_not_found', "Unable to extract tag using discriminator 'type'");
    await says({ shape: { type: 'circle', r: 'x' } }, 'body.shape.r', 'float_parsing', 'Input should be a valid number, unable to parse string as a number');
  });

  it('query strings: parsing errors, and a bad value is not reported as missing', async () => {
    await says({}, 'query.n', 'int_parsing', 'Input should be a valid integer, unable to parse string as an integer', '?n=abc');
    await says({}, 'query.n', 'int_parsing', 'Input should be a valid integer, unable to parse string as an integer', '?n=1.5');
    await says({}, 'query.n', 'greater_than_equal', 'Input should be greater than or equal to 1', '?n=0');
    await says({}, 'query.x', 'float_parsing', 'Input should be a valid number, unable to parse string as a number', '?x=abc');
  });

  it('kernel task inputs use the same wording', async () => {
    const task = (body: unknown) => t.request('POST', '/kernels/faults/tasks/kinds', { body });
    const good = { name: 'ab', count: 1, ratio: 0.5, flag: true, tags: [], meta: { a: 1 }, mode: 'fast', kind: 'exact' };
    expect((await task(good)).status).to.equal(200);
    const r = await task({ ...good, name: 5, count: undefined, ratio: 'x', flag: 'no', tags: 'x', meta: 1, mode: 'medium', kind: 'rough' });
    expect(r.status).to.equal(422);
    expect(r.body.detail).to.deep.equal([
      { loc: ['body', 'name'], msg: 'Input should be a valid string', type: 'string_type' },
      { loc: ['body', 'count'], msg: 'Field required', type: 'missing' },
      { loc: ['body', 'ratio'], msg: 'Input should be a valid number, unable to parse string as a number', type: 'float_parsing' },
      { loc: ['body', 'flag'], msg: 'Input should be a valid boolean, unable to interpret input', type: 'bool_parsing' },
      { loc: ['body', 'tags'], msg: 'Input should be a valid list', type: 'list_type' },
      { loc: ['body', 'meta'], msg: 'Input should be a valid dictionary or object to extract fields from', type: 'model_attributes_type' },
      { loc: ['body', 'mode'], msg: "Input should be 'fast' or 'slow'", type: 'enum' },
      { loc: ['body', 'kind'], msg: "Input should be 'exact'", type: 'literal_error' },
    ]);
    const sizes = await task({ ...good, name: 'a', count: 0, ratio: 1, tags: ['a', 'b', 'c'] });
    expect(sizes.body.detail.map((d: { type: string }) => d.type)).to.deep.equal(['string_too_short', 'greater_than_equal', 'less_than', 'too_long']);
    // Workflow definitions check their steps' inputs the same way (mesh.validateInput).
    expect(t.host.services.mesh.validateInput('faults', 'kinds', { ...good, flag: undefined })).to.deep.equal([{ loc: ['body', 'flag'], msg: 'Field required', type: 'missing' }]);
  });
});
