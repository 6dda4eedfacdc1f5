// Memory before authentication on the embedded MQTT broker: connections whose CONNECT header
// announces 268,435,455 bytes (the most MQTT can say) and then stream filler as fast as the
// server reads it. The server, in its own process so that its RSS is its own, closes each of them
// on the header: its RSS grows by less than MQTT_MEMORY_BUDGET_MIB, and it keeps answering HTTP
// and MQTT throughout.
import net from 'node:net';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFlexProcess, type FlexProcess } from '../support/flexProcess.ts';
import { connectPacket, rawExchange, remainingLength } from '../support/mqtt.ts';
import { createTestDatabase } from '../support/testApp.ts';

const CONNECTIONS = 20;
const FILLER_PER_CONNECTION = 64 * 1024 * 1024;
/** RSS growth allowed for the whole flood (docs/security.md, "MQTT broker"). */
const BUDGET_MIB = 32;

function rssMiB(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024;
}

/** Announces the largest CONNECT, then writes filler until the server closes the connection or
 * the filler is all sent; resolves with the bytes the socket accepted. */
function flood(port: number): Promise<number> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    const chunk = Buffer.alloc(1024 * 1024, 0x61);
    let sent = 0;
    let closed = false;
    const finish = () => {
      if (closed) return;
      closed = true;
      socket.destroy();
      resolve(sent);
    };
    socket.on('error', finish);
    socket.on('close', finish);
    socket.once('connect', () => {
      socket.write(Buffer.concat([Buffer.from([0x10]), remainingLength(268_435_455)]));
      const pump = () => {
        while (!closed && sent < FILLER_PER_CONNECTION) {
          sent += chunk.length;
          if (!socket.write(chunk)) return void socket.once('drain', pump);
        }
        if (sent >= FILLER_PER_CONNECTION) finish();
      };
      pump();
    });
  });
}

describe('a flood of CONNECTs announcing 256 MiB', () => {
  let flex: FlexProcess;
  let mqttPort: number;

  beforeAll(async () => {
    flex = await startFlexProcess({ DATABASE_URL: await createTestDatabase(), ADMIN_TOKEN: `flex_pat_${'m'.repeat(40)}`, MQTT_MAX_CONNECTIONS_PER_ADDRESS: String(CONNECTIONS * 2) });
    const line = flex.output().split('\n').find((l) => l.includes('"flex is listening"'))!;
    mqttPort = JSON.parse(line).mqttPort as number;
  });
  afterAll(async () => {
    flex?.child.kill('SIGKILL');
    await flex?.exited;
  });

  it(`keeps the server's RSS growth under ${BUDGET_MIB} MiB, and the server answering`, async () => {
    // Warm up what one refused login costs, then measure from there.
    expect((await rawExchange(mqttPort, connectPacket({ clientId: 'warm-up', username: 'x', password: 'not-a-token' }), 2000)).reply[3]).toBe(4);
    const before = rssMiB(flex.child.pid!);
    const floods = Array.from({ length: CONNECTIONS }, () => flood(mqttPort));
    const health = await fetch(`${flex.baseUrl}/health`);
    expect(health.status).toBe(200);
    const sent = await Promise.all(floods);
    const after = rssMiB(flex.child.pid!);
    console.log(`MQTT CONNECT flood: ${CONNECTIONS} connections, ${Math.round(sent.reduce((a, b) => a + b, 0) / 1024 / 1024)} MiB accepted by the sockets; server RSS ${before.toFixed(0)} → ${after.toFixed(0)} MiB`);
    expect(after - before).toBeLessThan(BUDGET_MIB);
    // Every flood was cut short by the server.
    expect(sent.every((n) => n < FILLER_PER_CONNECTION)).toBe(true);
    expect((await fetch(`${flex.baseUrl}/health`)).status).toBe(200);
    expect((await rawExchange(mqttPort, connectPacket({ clientId: 'after', username: 'y', password: 'not-a-token' }), 2000)).reply[3]).toBe(4);
    expect(flex.child.exitCode).toBeNull();
  }, 60_000);
});
