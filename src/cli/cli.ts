// fsdp-sim command line: the COMMANDS below (compare, sweep, diff, calibrate, pass, train, analyze).
// Run with `npm run -s sim -- <command> ...` or `bin/fsdp-sim.mjs`. Usage errors print one line
// and exit 2; failures exit 1.

import { pathToFileURL } from 'node:url';
import { ConfigError, FsdpSimError } from '../errors';
import { ANALYZE_USAGE, analyzeCommand } from './analyze_command';
import { UsageError } from './flags';
import { COMPARE_USAGE, compareCommand } from './compare_command';
import { processIo, type Io } from './io';
import { PASS_USAGE, passCommand } from './pass_command';
import { SWEEP_USAGE, sweepCommand } from './sweep_command';
import { DIFF_USAGE, diffCommand } from './diff_command';
import { CALIBRATE_USAGE, calibrateCommand } from './calibrate_command';
import { printable } from './cli_format';

const COMMANDS = ['compare', 'sweep', 'diff', 'calibrate', 'pass', 'train', 'analyze', 'help'] as const;

export const CLI_USAGE = [
  'usage: fsdp-sim <command> [flags]',
  '',
  'commands:',
  '  compare   simulate a step under several backends and compare (table, --json, --trace DIR)',
  '  sweep     simulate the cross product of config values (--vary PATH=V1,V2 or A:B:STEP) under each backend',
  '  diff      match every collective of one rank under backend A to backend B: exposed time, what hides it, why',
  "  calibrate fit the ring model (α, β per process group) and op-class time scales to a real run's Kineto traces",
  '  pass      run a backend on an imported torch FX graph dump and report what it changed',
  '  train     train for real on N ranks (worker threads, CPU or WebGPU kernels)',
  "  analyze   read PyTorch-profiler traces (.json / .json.gz) and print Holistic Trace Analysis' figures",
  "  help      this text; `fsdp-sim <command> --help` for a command's flags",
  '',
  'examples (in a clone of the repository, whose test/fixtures they read):',
  '  fsdp-sim compare --model llama3-8b --ranks 8 --hardware h100',
  '  fsdp-sim pass --fx-graph test/fixtures/fx/tiny_4layer_fw.json test/fixtures/fx/tiny_4layer_bw.json --json',
  '  fsdp-sim analyze test/fixtures/hta/sampled_rank-0.json.gz test/fixtures/hta/sampled_rank-1.json.gz',
  '  fsdp-sim train --model tiny --ranks 2 --steps 5',
].join('\n');

/** Runs one command line; resolves to the exit code. Never calls process.exit. */
export async function main(argv: readonly string[], raw: Io = processIo): Promise<number> {
  const [command, ...rest] = argv;
  // names from input files reach every output: no control character gets to the terminal raw
  const io: Io = { out: (t) => raw.out(printable(t)), err: (t) => raw.err(printable(t)) };
  try {
    switch (command) {
      case undefined:
      case 'help':
      case '--help':
      case '-h': {
        // train's module loads the live runtime; its usage is read from it only when asked
        const { TRAIN_USAGE } = await import('./train_command');
        const usages = [
          COMPARE_USAGE,
          SWEEP_USAGE,
          DIFF_USAGE,
          CALIBRATE_USAGE,
          PASS_USAGE,
          TRAIN_USAGE,
          ANALYZE_USAGE,
        ];
        io.out([CLI_USAGE, ...usages].join('\n\n'));
        return command === undefined ? 2 : 0;
      }
      case 'compare':
        return await compareCommand(rest, io);
      case 'sweep':
        return await sweepCommand(rest, io);
      case 'diff':
        return await diffCommand(rest, io);
      case 'calibrate':
        return await calibrateCommand(rest, io);
      case 'pass':
        return await passCommand(rest, io);
      case 'analyze':
        return await analyzeCommand(rest, io);
      case 'train': {
        const { trainCommand } = await import('./train_command');
        return await trainCommand(rest, io);
      }
      default:
        io.err(`fsdp-sim: unknown command '${command}'; valid commands: [${COMMANDS.join(', ')}] (fsdp-sim --help)`);
        return 2;
    }
  } catch (e) {
    if (e instanceof UsageError) {
      io.err(e.message);
      return 2;
    }
    if (e instanceof ConfigError) {
      io.err(`fsdp-sim ${command}: ${e.message}`);
      return 2;
    }
    if (e instanceof FsdpSimError) {
      io.err(`fsdp-sim ${command}: ${e.message}`);
      return 1;
    }
    throw e;
  }
}

/**
 * The process entry (src/cli/cli.ts run directly, and the package bin): stdout's EPIPE ends the
 * process quietly (`fsdp-sim diff ... | head -1`: the reader left, as Unix tools stop), and an error
 * no command caught is one `internal error` line on stderr with exit 1, never Node's crash dump.
 */
export function runProcess(argv: readonly string[]): Promise<void> {
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    writeFailed('standard output', e);
  });
  process.stderr.on('error', () => process.exit(1)); // nowhere left to say why
  return main(argv).then(
    (code) => {
      process.exitCode = code;
    },
    (e: unknown) => {
      process.stderr.write(`fsdp-sim: internal error: ${printable((e as Error)?.stack ?? String(e))}\n`);
      process.exitCode = 1;
    },
  );
}

/**
 * Any other write error (ENOSPC on /dev/full, EIO, EBADF): one line on stderr naming the stream and
 * the OS reason, exit 1, never Node's stack.
 */
function writeFailed(stream: string, e: NodeJS.ErrnoException): never {
  const why = e.code ? `${e.code} (${e.syscall ?? 'write'})` : e.message;
  try {
    process.stderr.write(`fsdp-sim: cannot write to ${stream}: ${why}; output is incomplete\n`);
  } finally {
    process.exit(1);
  }
}

// run when executed directly (`node --import tsx src/cli/cli.ts ...`)
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) void runProcess(process.argv.slice(2));
