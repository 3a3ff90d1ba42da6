// The floe command line: parses the command, then hands over to the composition root. Until the
// worker exists it offers help and version only.
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { runObserve } from './observe.ts'
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

options:
  -c, --config FILE   the configuration file (default: $FLOE_CONFIG)
      --json          observe, status: JSON for machines
  -h, --help          show this help
  -v, --version       print the version`

export async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: false,
    options: {
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean', short: 'v' },
      config: { type: 'string', short: 'c' },
      json: { type: 'boolean' },
    },
  })
  if (values.version) {
    console.log(pkg.version)
    return 0
  }
  const command = positionals[0]
  if (values.help || command === undefined) {
    console.log(usage)
    return values.help ? 0 : 2
  }
  const configPath = typeof values.config === 'string' ? values.config : undefined
  if (command === 'validate') return runValidate(configPath)
  if (command === 'run') {
    // A stopped worker exits even if a client library still holds a socket or timer open.
    const code = await runWorker(configPath)
    setTimeout(() => process.exit(code), 200)
    return code
  }
  if (command === 'status') return runStatus(configPath, { json: values.json === true })
  if (command === 'observe') return runObserve(configPath, { json: values.json === true })
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
