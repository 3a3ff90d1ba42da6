// The floe command line: parses the command, then hands over to the composition root. Until the
// worker exists it offers help and version only.
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { parseMaintainArguments, runMaintain } from './maintain.ts'
import { runObserve } from './observe.ts'
import { runRewind } from './rewind.ts'
import { parseRewindArguments } from './rewind-args.ts'
import { runWorker } from './run.ts'
import { runStatus } from './status.ts'
import { runValidate } from './validate.ts'

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }

export const usage = `floe ${pkg.version} — exactly-once ingestion of Kafka topics into Apache Iceberg tables

usage: floe <command> [--config floe.yaml]

commands:
  run        run one worker (run N of them with the same file to scale out)
  observe    live, decoded view of the control topic (--json for machines)
  status     per dataset: table offsets vs topic end offsets, last commit
  validate   check the config file and reach every server it names
  rewind     move a dataset's table offsets back to read a range again (workers stopped):
             --dataset NAME (--to-offset TOPIC:PARTITION=OFFSET,... | --to-timestamp ISO) [--dry-run]
  maintain   expire old snapshots of each dataset's table and delete the files only they reached,
             keeping Floe's progress: [--dataset NAME] [--dry-run]

options:
  -c, --config FILE   the configuration file (default: $FLOE_CONFIG)
      --json          observe, status: JSON for machines
  -h, --help          show this help
  -v, --version       print the version`

/** What the command line asks for. */
export type Invocation =
  | { kind: 'version' }
  | { kind: 'help'; exitCode: 0 | 2 }
  | { kind: 'command'; command: string; configPath: string | undefined; json: boolean }

/**
 * Reads the command line. Lenient (strict: false) so that an unknown option does not stop a
 * command; `--version` wins over everything, `--help` over a command, and no command is help
 * with exit code 2.
 */
export function parseInvocation(argv: readonly string[]): Invocation {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: false,
    options: {
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean', short: 'v' },
      config: { type: 'string', short: 'c' },
      json: { type: 'boolean' },
      // rewind's options, known here so that their values are not taken for the command
      dataset: { type: 'string' },
      'to-offset': { type: 'string' },
      'to-timestamp': { type: 'string' },
      'dry-run': { type: 'boolean' },
    },
  })
  if (values.version) return { kind: 'version' }
  const command = positionals[0]
  if (values.help || command === undefined) return { kind: 'help', exitCode: values.help ? 0 : 2 }
  return {
    kind: 'command',
    command,
    configPath: typeof values.config === 'string' ? values.config : undefined,
    json: values.json === true,
  }
}

export async function main(argv: string[]): Promise<number> {
  const invocation = parseInvocation(argv)
  if (invocation.kind === 'version') {
    console.log(pkg.version)
    return 0
  }
  if (invocation.kind === 'help') {
    console.log(usage)
    return invocation.exitCode
  }
  const { command, configPath, json } = invocation
  if (command === 'validate' || command === 'run') {
    // A stopped worker, or a validation whose storage check gave up on a client still retrying,
    // exits even if a client library holds a socket or timer open.
    const code = command === 'run' ? await runWorker(configPath) : await runValidate(configPath)
    setTimeout(() => process.exit(code), 200)
    return code
  }
  if (command === 'rewind') return runRewind(parseRewindArguments(argv))
  if (command === 'maintain') return runMaintain(parseMaintainArguments(argv))
  if (command === 'status') return runStatus(configPath, { json })
  if (command === 'observe') return runObserve(configPath, { json })
  console.error(`floe: unknown command '${command}'\n\n${usage}`)
  return 2
}

if (import.meta.main) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code
    },
    (error: unknown) => {
      console.error(`floe: ${error instanceof Error ? error.message : String(error)}`)
      process.exitCode = 1
    },
  )
}
