import { ConfigError, loadConfig } from './config';
import { Host } from './host';
import { BootError } from './loader';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`platform-control: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const host = new Host({ config });
  let signalled = false;
  const onSignal = (sig: NodeJS.Signals) => {
    if (signalled) {
      host.log.warn({ signal: sig }, 'second signal: exiting at once');
      process.exit(1);
    }
    signalled = true;
    host.log.info({ signal: sig }, 'shutting down');
    host.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  try {
    const { port, admin } = await host.start();
    if (admin) {
      // Printed once, on the first start; never written to the log.
      process.stdout.write(
        `\n  First start: created the admin user\n    e-mail:   ${admin.email}\n    password: ${admin.password}\n  Keep the password: it is not shown again.\n\n`,
      );
    }
    process.stdout.write(`platform-control listening on http://${config.server.host}:${port}\n`);
  } catch (err) {
    const message = err instanceof BootError || err instanceof ConfigError ? err.message : (err as Error).stack;
    process.stderr.write(`platform-control: refusing to start: ${message}\n`);
    await host.stop().catch(() => undefined);
    process.exit(3);
  }
}

void main();
