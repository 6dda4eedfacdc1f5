// Regression: QuestDB 7.4 answers GET /settings with `{}`. @questdb/nodejs-client's default
// `protocol_version=auto` then read `config["line.proto.support.versions"]` of undefined and
// every write of the QuestDB store failed with "TypeError: Cannot read properties of undefined".
// The version is now settled once at connect (ilpSender.ts) and falls back to 1.
//
// A real HTTP server on loopback plays QuestDB's ILP/HTTP endpoints (/settings and /write), so
// this runs without a QuestDB; test/integration/timeseriesContract.test.ts covers a real one.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Sender } from '@questdb/nodejs-client';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ilpProtocolVersion, listedVersions, senderConfig } from '../../src/store/timeseries/questdb/ilpSender.ts';

const log = pino({ level: 'silent' });
let settings = '{}';
let settingsStatus = 200;
const written: string[] = [];
let server: http.Server;
let url: string;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'GET' && req.url === '/settings') {
        res.writeHead(settingsStatus, { 'content-type': 'application/json' }).end(settings);
      } else if (req.method === 'POST' && req.url?.startsWith('/write')) {
        written.push(Buffer.concat(chunks).toString('utf8'));
        res.writeHead(204).end();
      } else res.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('QuestDB whose /settings lists no ILP protocol versions', () => {
  it('is written to with protocol version 1', async () => {
    settings = '{}';
    const version = await ilpProtocolVersion(url, 'auto', log);
    expect(version).toBe('1');
    const sender = await Sender.fromConfig(senderConfig(url, version));
    await sender.table('readings').symbol('register_id', '7').floatColumn('value', 1.5).intColumn('resolution', 900).at(Date.UTC(2031, 0, 1), 'ms');
    await sender.flush();
    await sender.close();
    expect(written.at(-1)).toBe('readings,register_id=7 value=1.5,resolution=900i 1924992000000000000\n');
  });

  it('uses the highest version a newer server lists, and 1 when /settings fails', async () => {
    settings = JSON.stringify({ config: { 'line.proto.support.versions': [1, 2] } });
    expect(await ilpProtocolVersion(url, 'auto', log)).toBe('2');
    settingsStatus = 404;
    expect(await ilpProtocolVersion(url, 'auto', log)).toBe('1');
    settingsStatus = 200;
    settings = 'not json';
    expect(await ilpProtocolVersion(url, 'auto', log)).toBe('1');
    expect(await ilpProtocolVersion('http://127.0.0.1:1', 'auto', log)).toBe('1');
    expect(await ilpProtocolVersion('http://127.0.0.1:1', '2', log)).toBe('2');
  });

  it('reads the versions wherever a server lists them', () => {
    expect(listedVersions({})).toEqual([]);
    expect(listedVersions(null)).toEqual([]);
    expect(listedVersions({ config: { 'line.proto.support.versions': [1, 2, 3, 9] } })).toEqual(['1', '2', '3']);
    expect(listedVersions({ 'line.proto.support.versions': ['1'] })).toEqual(['1']);
    expect(listedVersions({ config: { 'line.proto.support.versions': 'nonsense' } })).toEqual([]);
  });
});
