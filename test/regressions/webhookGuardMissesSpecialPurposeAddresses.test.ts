// Regression: the webhook address guard accepted
// http://[64:ff9b::a9fe:a9fe]/ (the cloud metadata address through NAT64), 6to4 2002::/16,
// IPv4-compatible ::a.b.c.d and site-local fec0::/10 addresses. It now classifies addresses
// with ipaddr.js against IANA's special-purpose registries (docs/webhook-addresses.md), on the
// URL when a subscription is written and on every resolved address when a webhook is sent.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callbackUrlProblem, isInternalAddress } from '../../src/vtn/callbackUrl.ts';
import { WebhookClient, type Lookup } from '../../src/vtn/webhookClient.ts';

const GAPS = [
  '64:ff9b::a9fe:a9fe', // NAT64 well-known prefix, 169.254.169.254 inside
  '64:ff9b::7f00:1', // NAT64, 127.0.0.1
  '64:ff9b:1::a9fe:a9fe', // local-use NAT64 prefix
  '2002:a9fe:a9fe::1', // 6to4 of 169.254.169.254
  '2002:7f00:1::', // 6to4 of 127.0.0.1
  '::a9fe:a9fe', // IPv4-compatible
  '::127.0.0.1',
  'fec0::1', // site-local
  '2001::1', // Teredo
  '2001:db8::1', // documentation
  '100::1', // discard-only
  '::ffff:a9fe:a9fe', // IPv4-mapped, hex form
  '5f00::1', // SRv6 SIDs
  '3fff::1', // documentation (RFC 9637)
  '192.0.0.170', // NAT64 discovery
  '192.88.99.1', // deprecated 6to4 relay anycast
  '192.31.196.1', // AS112
];

describe('webhook address guard', () => {
  it('refuses the special-purpose addresses it used to accept', () => {
    for (const address of GAPS) {
      expect(isInternalAddress(address), address).toBe(true);
      const host = address.includes(':') ? `[${address}]` : address;
      expect(callbackUrlProblem(`http://${host}/hook`, false), address).toMatch(/special-purpose/);
    }
  });

  it('still accepts public addresses, also when embedded in NAT64, 6to4 or IPv4-mapped form', () => {
    for (const address of ['8.8.8.8', '64:ff9b::808:808', '2002:808:808::1', '::ffff:8.8.8.8', '2606:4700:4700::1111']) {
      expect(isInternalAddress(address), address).toBe(false);
    }
  });
});

describe('webhook delivery', () => {
  let server: http.Server;
  let port: number;
  let hits = 0;
  beforeAll(async () => {
    server = http.createServer((_req, res) => {
      hits += 1;
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('checks the addresses a name resolves to at connect time (DNS rebinding)', async () => {
    for (const resolved of ['127.0.0.1', '::ffff:127.0.0.1', '64:ff9b::7f00:1']) {
      // A name that was public when the subscription was written now resolves internally.
      const lookup: Lookup = (_host, options, callback) => {
        const family = resolved.includes(':') ? 6 : 4;
        if (options.all) callback(null, [{ address: resolved, family }]);
        else callback(null, resolved, family);
      };
      const client = new WebhookClient({ timeoutMs: 2000, allowInternal: false, maxSockets: 2, lookup });
      const result = await client.post(`http://hooks.example.com:${port}/cb`, '{}', { 'content-type': 'application/json' }, new AbortController().signal);
      client.close();
      expect(result.delivered, resolved).toBe(false);
      expect(result.retryable, resolved).toBe(false);
      expect(result.error, resolved).toMatch(/special-purpose/);
    }
    expect(hits).toBe(0);
  });
});
