import { Command, CommanderError } from 'commander';
import { eventsCommand } from './commands/events';
import { ingestCommand } from './commands/ingest';
import { loginCommand } from './commands/login';
import { kernelsCommand, nodesCommand } from './commands/mesh';
import { chaosCommand, healthCommand, incidentsCommand, tasksCommand, workflowsCommand } from './commands/ops';
import { CliError, EXIT } from './errors';

export function program(): Command {
  const p = new Command('pcctl')
    .description('Platform Control command line: the mesh, tasks, incidents, workflows, chaos, events and telemetry')
    .option('--url <url>', 'service URL (else PC_URL, else the profile)')
    .option('-o, --output <format>', 'table (for people) or json (for scripts)', 'table')
    .showHelpAfterError()
    .exitOverride();
  for (const c of [loginCommand(), kernelsCommand(), nodesCommand(), tasksCommand(), incidentsCommand(), workflowsCommand(), chaosCommand(), eventsCommand(), ingestCommand(), healthCommand()]) {
    p.addCommand(c);
  }
  // Subcommands exit through the same handler as the program (usage errors: exit 2).
  const override = (c: Command) => {
    c.exitOverride();
    c.commands.forEach(override);
  };
  override(p);
  return p;
}

export async function main(argv: string[]): Promise<number> {
  try {
    await program().parseAsync(argv);
    return EXIT.ok;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version are not errors; commander has already printed its message.
      return err.code === 'commander.helpDisplayed' || err.code === 'commander.help' || err.code === 'commander.version' || err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    if (err instanceof CliError) {
      process.stderr.write(`pcctl: ${err.message}\n`);
      return err.exitCode;
    }
    process.stderr.write(`pcctl: ${err instanceof Error ? err.message : String(err)}\n`);
    return EXIT.failed;
  }
}

if (require.main === module) {
  void main(process.argv).then((code) => {
    process.exitCode = code;
  });
}
