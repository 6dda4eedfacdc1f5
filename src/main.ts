// Process entry point: configuration, the app, start-up message, signals. `--demo` (npm run demo)
// also seeds sample data on an empty DATA_DIR (src/cli/demo/).
import { createApp } from './app.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { createLogger } from './log.ts';

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const unknown = args.filter((a) => a !== '--demo');
  if (unknown.length > 0) {
    process.stderr.write(`Unknown argument ${unknown.join(' ')}; the only one is --demo (sample data, docs/demo.md).\n`);
    process.exit(2);
  }
  const demo = args.includes('--demo') ? await import('./cli/demo/demo.ts') : undefined;
  let config: Config;
  try {
    config = loadConfig(demo ? demo.demoEnvironment(process.env) : process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\nSee docs/configuration.md.\n`);
      process.exit(1);
    }
    throw err;
  }
  const log = createLogger(config.logLevel);
  const app = await createApp(config, { log });
  const { baseUrl, adminToken } = app;
  log.info({ port: app.port, baseUrl, vtnUrl: `${baseUrl}/api/openadr/v1`, mqttPort: app.mqttPort, authUrl: `${baseUrl}/oauth/token`, adminTokenLocation: adminToken.source }, 'flex is listening');
  process.stdout.write(
    [
      '',
      `  Flex is listening on ${baseUrl}`,
      `    base_url  ${baseUrl}`,
      `    vtn_url   ${baseUrl}/api/openadr/v1`,
      `    auth_url  ${baseUrl}/oauth/token`,
      `    OpenAPI   ${baseUrl}/api/openapi.json`,
      `    admin token: ${adminToken.source === 'ADMIN_TOKEN' ? 'the ADMIN_TOKEN environment variable' : adminToken.source}`,
      ...(adminToken.generated ? [`    generated admin token (shown once, also saved in that file): ${adminToken.generated}`] : []),
      '',
      '',
    ].join('\n'),
  );
  if (demo) {
    try {
      await demo.startDemo({ baseUrl, dataDir: config.dataDir, adminToken: config.adminToken, write: (text) => process.stdout.write(text) });
    } catch (err) {
      log.error({ err }, 'demo seeding failed');
      await app.close();
      process.exit(1);
    }
  }

  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      log.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    log.info({ signal }, 'shutting down: finishing in-flight requests');
    app.close().then(
      () => {
        log.info('stopped');
        log.flush();
        process.exit(0);
      },
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.on('unhandledRejection', (reason) => log.error({ err: reason }, 'unhandled promise rejection'));
}

main().catch((err: unknown) => {
  process.stderr.write(`Flex failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
