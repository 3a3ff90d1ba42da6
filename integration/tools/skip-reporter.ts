// A node:test reporter that lets no skipped or todo test pass unnoticed, used beside `spec` by
// `npm run test:unit` and `npm run test:integration`:
//
//   node --test --test-reporter=spec --test-reporter-destination=stdout \
//     --test-reporter=./integration/tools/skip-reporter.ts --test-reporter-destination=stderr ...
//
// At the end of the run it lists every skipped and todo test with its file and reason. A todo
// test always fails the run (it is unfinished work, whatever the machine). A skipped test fails
// the run when CI is set (CI=true): CI has every tool, so a skip there means a check that silently
// stopped checking. Outside CI a skip is allowed (a developer without Java or docker-compose can
// still run the rest), and the list says which tool each skipped test is missing.
import { relative } from 'node:path'
import type { TestEvent } from 'node:test/reporters'

interface Unrun {
  kind: 'skip' | 'todo'
  name: string
  file: string | undefined
  reason: string
}

const inCi = /^(1|true|yes)$/i.test(process.env.CI ?? '')

export default async function* skipReporter(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  const unrun: Unrun[] = []
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue
    const { skip, todo, name, file } = event.data
    if (skip !== undefined && skip !== false) {
      unrun.push({ kind: 'skip', name, file, reason: typeof skip === 'string' ? skip : '(no reason given)' })
    } else if (todo !== undefined && todo !== false) {
      unrun.push({ kind: 'todo', name, file, reason: typeof todo === 'string' ? todo : '(no reason given)' })
    }
  }
  if (unrun.length === 0) return
  const todos = unrun.filter((u) => u.kind === 'todo').length
  const skips = unrun.length - todos
  const fails = todos > 0 || (inCi && skips > 0)
  const rule = inCi ? 'with CI set, a skip fails the run' : 'outside CI a skip is allowed; with CI=true it fails'
  yield `\n${'!'.repeat(72)}\n`
  yield `${skips} skipped and ${todos} todo test(s) (a todo always fails the run; ${rule})${fails ? ': FAILED' : ''}\n`
  for (const u of unrun)
    yield `  ${u.kind} ${u.file ? relative(process.cwd(), u.file) : '?'}: ${u.name} -- ${u.reason}\n`
  yield `${'!'.repeat(72)}\n`
  if (fails) process.exitCode = 1
}
