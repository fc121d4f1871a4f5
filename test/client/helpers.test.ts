// The standalone helpers against a scripted loopback server: paging by Link and by
// X-Total-Count, the bounded Link parser, multipart uploads, markdown as text.
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import {
  ApiError,
  collectAll,
  createGiteaClient,
  paginate,
  renderMarkdown,
  uploadReleaseAttachment,
} from '../../src/index.js';
import { nextLink } from '../../src/link.js';
import { json, raw, useFaultServer } from '../support/fault-server.js';

const fault = useFaultServer();

const client = () =>
  createGiteaClient({ baseUrl: fault.current.baseUrl, auth: { token: 'tok-9f8e7d6c5b4a' }, retry: 0 });
const org = (name: string) => ({ id: name.length, name });
const link = (page: number, rel: string) => `<${fault.current.baseUrl}/admin/orgs?limit=2&page=${page}>; rel="${rel}"`;

describe('paginate and collectAll', () => {
  it('follows rel="next" until the last page', async () => {
    fault.current.script(
      json(200, [org('acme'), org('bluebird')], {
        link: [link(2, 'next'), link(3, 'last')].join(','),
        'x-total-count': '5',
      }),
      json(200, [org('copperhead'), org('driftwood')], {
        link: [link(3, 'next'), link(3, 'last'), link(1, 'first'), link(1, 'prev')].join(','),
        'x-total-count': '5',
      }),
      json(200, [org('ember')], { link: [link(1, 'first'), link(2, 'prev')].join(','), 'x-total-count': '5' }),
    );
    const names = (await collectAll(client(), '/admin/orgs', { params: { query: { limit: 2 } } })).map((o) => o.name);
    expect(names).toEqual(['acme', 'bluebird', 'copperhead', 'driftwood', 'ember']);
    expect(fault.current.received.map((r) => r.url)).toEqual([
      '/api/v1/admin/orgs?limit=2&page=1',
      '/api/v1/admin/orgs?limit=2&page=2',
      '/api/v1/admin/orgs?limit=2&page=3',
    ]);
  });

  it('falls back to X-Total-Count when there is no Link header', async () => {
    fault.current.script(
      json(200, [org('a'), org('b')], { 'x-total-count': '3' }),
      json(200, [org('c')], { 'x-total-count': '3' }),
    );
    const members = await collectAll(client(), '/teams/{id}/members', {
      params: { path: { id: 12001 }, query: { limit: 2 } },
    });
    expect(members).toHaveLength(3);
    expect(fault.current.received).toHaveLength(2);
  });

  it('stops at an empty page even if the headers promise more', async () => {
    fault.current.script(json(200, [], { link: link(2, 'next'), 'x-total-count': '99' }));
    await expect(collectAll(client(), '/admin/orgs')).resolves.toEqual([]);
    expect(fault.current.received).toHaveLength(1);
  });

  it('stops after maxPages', async () => {
    fault.current.script(
      json(200, [org('a')], { link: link(2, 'next') }),
      json(200, [org('b')], { link: link(3, 'next') }),
    );
    const items = await collectAll(client(), '/admin/orgs', { params: { query: { limit: 1 } } }, { maxPages: 2 });
    expect(items.map((o) => o.name)).toEqual(['a', 'b']);
    expect(fault.current.received).toHaveLength(2);
  });

  it.each([Number.NaN, -1, '2'])('refuses maxPages %s with a TypeError, asking for nothing', async (maxPages) => {
    await expect(collectAll(client(), '/admin/orgs', {}, { maxPages: maxPages as number })).rejects.toThrow(
      new TypeError('maxPages is not a number of pages'),
    );
    expect(fault.current.received).toHaveLength(0);
  });

  it('starts at the page asked for, and yields items one by one', async () => {
    fault.current.script(json(200, [org('c'), org('d')], { link: link(3, 'next') }), json(200, [org('e')]));
    const seen: string[] = [];
    for await (const item of paginate(client(), '/admin/orgs', { params: { query: { limit: 2, page: 2 } } }))
      seen.push(item.name!);
    expect(seen).toEqual(['c', 'd', 'e']);
    expect(fault.current.received[0]!.url).toBe('/api/v1/admin/orgs?limit=2&page=2');
  });

  it('throws an ApiError when a page fails', async () => {
    fault.current.script(
      json(200, [org('a')], { link: link(2, 'next') }),
      json(403, { message: 'user should be the site admin', url: 'x' }),
    );
    const error = await collectAll(client(), '/admin/orgs').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(403);
  });

  it('never loops on a next link that points back', async () => {
    fault.current.script(json(200, [org('a')], { link: `<${fault.current.baseUrl}/admin/orgs?page=1>; rel="next"` }));
    await expect(collectAll(client(), '/admin/orgs')).resolves.toHaveLength(1);
  });
});

describe('the Link parser', () => {
  it('finds rel="next" among other links, quoted or not, in any order', () => {
    expect(nextLink('<https://h/a?page=3>; rel="last", <https://h/a?page=2>; rel="next"')).toBe('https://h/a?page=2');
    expect(nextLink('<https://h/a?page=2>;rel=next')).toBe('https://h/a?page=2');
    expect(nextLink('<https://h/a?page=1>; rel="first"')).toBeUndefined();
    expect(nextLink('')).toBeUndefined();
    expect(nextLink(null)).toBeUndefined();
  });

  it('stays linear on hostile headers and ignores oversized ones', () => {
    // Patterns that make backtracking parsers explode; these return at once here.
    const hostile = [
      '<'.repeat(10_000),
      `${'<a>;'.repeat(3000)}rel="nex`,
      `<${'a'.repeat(15_000)}`,
      `${' ;'.repeat(8000)}`,
      `<x>; rel="next"${' '.repeat(20_000)}`,
    ];
    for (const header of hostile) expect(nextLink(header)).toBeUndefined();
  });
});

describe('uploadReleaseAttachment', () => {
  const ATTACHMENT = { id: 13001, name: 'rocket.tar.gz', size: 5 };

  it.each([
    ['a Blob', new Blob(['hello']), 'rocket.tar.gz'],
    ['a File (its own name)', new File(['hello'], 'from-file.tar.gz'), undefined],
    ['a Uint8Array', new TextEncoder().encode('hello'), 'rocket.tar.gz'],
    ['an ArrayBuffer', new TextEncoder().encode('hello').buffer, 'rocket.tar.gz'],
    [
      'an ArrayBuffer from another realm',
      runInNewContext('new Uint8Array([104, 101, 108, 108, 111]).buffer') as ArrayBuffer,
      'rocket.tar.gz',
    ],
  ] as const)('sends %s as the multipart part "attachment"', async (_what, file, name) => {
    fault.current.script(json(201, ATTACHMENT));
    const attachment = await uploadReleaseAttachment(client(), {
      owner: 'acme',
      repo: 'rocket',
      id: 14001,
      file,
      ...(name ? { name } : {}),
    });
    expect(attachment).toEqual(ATTACHMENT);
    const sent = fault.current.received[0]!;
    const expectedName = name ?? 'from-file.tar.gz';
    expect(sent.method).toBe('POST');
    expect(sent.url).toBe(`/api/v1/repos/acme/rocket/releases/14001/assets?name=${expectedName}`);
    expect(sent.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    const form = await new Response(new Uint8Array(sent.body), {
      headers: { 'content-type': sent.headers['content-type']! },
    }).formData();
    const part = form.get('attachment') as File;
    expect(part.name).toBe(expectedName);
    expect(await part.text()).toBe('hello');
  });

  it('throws an ApiError when the server refuses the file', async () => {
    fault.current.script(json(413, { message: 'attachment exceeds limit 2147483648', url: 'x' }));
    const error = await uploadReleaseAttachment(client(), {
      owner: 'acme',
      repo: 'rocket',
      id: 14001,
      file: new Blob(['x']),
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 413, operationId: 'repoCreateReleaseAttachment' });
  });

  it.each([
    // input.files[0] when nothing was picked: fetch would upload the text "undefined".
    ['nothing', undefined],
    ['a string', 'hello'],
    ['a plain object', { size: 5 }],
  ])('refuses %s as the file with a TypeError, sending nothing', async (_what, file) => {
    await expect(
      uploadReleaseAttachment(client(), { owner: 'acme', repo: 'rocket', id: 14001, file: file as never }),
    ).rejects.toThrow(new TypeError('file is not a Blob, File, typed array or ArrayBuffer'));
    expect(fault.current.received).toHaveLength(0);
  });
});

describe('renderMarkdown', () => {
  it.each(['text/html; charset=utf-8', 'text/plain; charset=utf-8'])(
    'returns the HTML labelled %s as a string',
    async (type) => {
      fault.current.script(raw(200, '<ul>\n<li>countdown</li>\n</ul>\n', { 'content-type': type }));
      await expect(renderMarkdown(client(), { Text: '- countdown', Mode: 'markdown' })).resolves.toBe(
        '<ul>\n<li>countdown</li>\n</ul>\n',
      );
      expect(JSON.parse(fault.current.received[0]!.body.toString())).toEqual({ Text: '- countdown', Mode: 'markdown' });
    },
  );

  it('returns an empty string for empty text', async () => {
    fault.current.script(raw(200, ''));
    await expect(renderMarkdown(client(), { Text: '' })).resolves.toBe('');
  });
});
