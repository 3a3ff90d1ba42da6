import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { type Invocation, parseInvocation } from './main.ts'

describe('the floe command line', () => {
  const cases: [string, string[], Invocation][] = [
    [
      'takes the command and the config file',
      ['run', '--config', 'floe.yaml'],
      { kind: 'command', command: 'run', configPath: 'floe.yaml', json: false },
    ],
    [
      'takes -c for --config, and --json',
      ['status', '-c', 'f.yaml', '--json'],
      { kind: 'command', command: 'status', configPath: 'f.yaml', json: true },
    ],
    [
      'takes --config=FILE',
      ['observe', '--config=floe.yaml'],
      { kind: 'command', command: 'observe', configPath: 'floe.yaml', json: false },
    ],
    [
      'leaves the config file to FLOE_CONFIG when it is not given',
      ['validate'],
      { kind: 'command', command: 'validate', configPath: undefined, json: false },
    ],
    [
      'passes an unknown command on, for main to refuse it',
      ['frobnicate'],
      { kind: 'command', command: 'frobnicate', configPath: undefined, json: false },
    ],
    [
      'does not stop at an unknown option',
      ['run', '--verbose', '-c', 'f.yaml'],
      { kind: 'command', command: 'run', configPath: 'f.yaml', json: false },
    ],
    ['shows help and fails without a command', [], { kind: 'help', exitCode: 2 }],
    ['shows help when asked, over a command', ['run', '--help'], { kind: 'help', exitCode: 0 }],
    ['takes -h for help', ['-h'], { kind: 'help', exitCode: 0 }],
    ['prints the version before anything else', ['run', '-h', '--version'], { kind: 'version' }],
    ['takes -v for the version', ['-v'], { kind: 'version' }],
  ]
  for (const [name, argv, expected] of cases) {
    test(name, () => assert.deepEqual(parseInvocation(argv), expected))
  }
})
