// Regression: ordinary MQTT clients could not use the broker. It listened in plain text only (a
// token sent over the internet in clear), and the MQTT 3.1.1 rule that a password needs a user
// name was the client's problem. The broker now also listens with TLS on MQTT_TLS_PORT (key and
// certificate files from the configuration), announced first by /notifiers, and takes the token
// from the password whatever the user name, also when the CONNECT carries a password and no user
// name (which MQTT 3.1.1 forbids, and some clients send anyway).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectPacket, connectSession, granted, rawExchange } from '../support/mqtt.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';
import { BL_SCOPES, expectStatus, VEN_SCOPES, vtnClient, waitFor, type VtnClient } from '../support/vtn.ts';

const V31 = '/api/openadr/3.1.0';

describe('MQTT with TLS, and with a password but no user name', () => {
  let t: TestApp;
  let bl: VtnClient;
  let ven: VtnClient;
  let dir: string;
  let cert: Buffer;

  beforeAll(async () => {
    // A self-signed certificate for localhost, made for this test.
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flex-mqtt-tls-'));
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1', '-subj', '/CN=localhost',
      '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1', '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem')], { stdio: 'ignore' });
    cert = fs.readFileSync(path.join(dir, 'cert.pem'));
    t = await startTestApp({ VTN_DISPATCH_POLL_MS: '50', MQTT_TLS_PORT: '0', MQTT_TLS_KEY_FILE: path.join(dir, 'key.pem'), MQTT_TLS_CERT_FILE: path.join(dir, 'cert.pem') });
    bl = await vtnClient(t.api, t.adminToken, BL_SCOPES);
    ven = await vtnClient(t.api, t.adminToken, VEN_SCOPES, bl.organizationId);
  });
  afterAll(async () => {
    await t?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('serves TLS on MQTT_TLS_PORT, announced first by /notifiers', async () => {
    const tlsPort = t.app.mqttTlsPort;
    expect(tlsPort).toBeGreaterThan(0);
    const notifiers = await expectStatus(t.api.get(`${V31}/notifiers`, ven.token), 200);
    expect(notifiers.MQTT.URIS).toEqual([`mqtts://127.0.0.1:${tlsPort}`, `mqtt://127.0.0.1:${t.app.mqttPort}`]);
    const program = (await expectStatus(t.api.post(`${V31}/programs`, { programName: 'tls' }, bl.token), 201)).id;
    const venId = (await expectStatus(t.api.post(`${V31}/vens`, { objectType: 'BL_VEN_REQUEST', venName: 'over-tls', clientID: ven.clientId }, bl.token), 201)).id;
    const s = await connectSession(tlsPort, { protocol: 'mqtts', ca: cert, username: ven.clientId, password: ven.token });
    try {
      expect(await granted(s.client, [`openadr3/${bl.organizationId}/vens/${venId}/events/+`])).toEqual([1]);
      const event = await expectStatus(t.api.post(`${V31}/events`, { programID: program, targets: ['VEN_NAME:over-tls'] }, bl.token), 201);
      await waitFor('the event over TLS', () => s.messages.some((m) => m.body.object?.id === event.id), 5000);
    } finally {
      await s.client.endAsync();
    }
  });

  it('accepts a token as password without a user name', async () => {
    const { reply } = await rawExchange(t.app.mqttPort, connectPacket({ clientId: 'no-user-name', password: ven.token }), 1000);
    // CONNACK: type 2, length 2, session present 0, return code 0.
    expect([...reply.subarray(0, 4)]).toEqual([0x20, 2, 0, 0]);
  });

  it('refuses a CONNECT without a token with return code 4, whatever the user name', async () => {
    const { reply } = await rawExchange(t.app.mqttPort, connectPacket({ clientId: 'nothing', username: ven.clientId }), 1000);
    expect([...reply.subarray(0, 4)]).toEqual([0x20, 2, 0, 4]);
  });
});
