// The project's two import rules (README "Layout"), as a lint step of `npm run check`:
//
// 1. Dependencies point one way: shared <- protocol <- {coordinator, participant} <- cli;
//    coordinator and participant never import each other; integration/ and bench/ may import anything.
// 2. A folder's index.ts is its API: a file may import files of its own folder and of the folders
//    above it, and otherwise only another folder's index.ts.
//
// Written by hand because Biome's noRestrictedImports matches import strings, not the folders
// they resolve to, so neither rule can be said in it.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')

const allowed: Record<string, string[] | '*'> = {
  shared: ['shared'],
  protocol: ['protocol', 'shared'],
  coordinator: ['coordinator', 'protocol', 'shared'],
  participant: ['participant', 'protocol', 'shared'],
  cli: ['cli', 'coordinator', 'participant', 'protocol', 'shared'],
  integration: '*',
  bench: '*',
}

function* sources(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.')) continue
    const path = join(dir, name)
    if (statSync(path).isDirectory()) yield* sources(path)
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) yield path
  }
}

const importPattern =
  /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g

function top(path: string): string {
  return relative(root, path).split(sep)[0] ?? ''
}

export function violations(): string[] {
  const found: string[] = []
  for (const folder of Object.keys(allowed)) {
    let exists = false
    try {
      exists = statSync(join(root, folder)).isDirectory()
    } catch {}
    if (!exists) continue
    for (const file of sources(join(root, folder))) {
      const text = readFileSync(file, 'utf8')
      for (const match of text.matchAll(importPattern)) {
        const spec = match[1] ?? match[2]
        if (!spec) continue
        const target = resolve(dirname(file), spec)
        const from = top(file)
        const to = top(target)
        const rule = allowed[from]
        const where = `${relative(root, file)}: imports ${spec}`
        if (rule !== '*' && rule && !rule.includes(to)) {
          found.push(`${where} — ${from}/ may not depend on ${to}/`)
          continue
        }
        if (rule === '*' || file.endsWith('.test.ts')) continue
        const targetDir = dirname(target)
        const ownOrAbove = dirname(file) === targetDir || dirname(file).startsWith(targetDir + sep)
        if (!ownOrAbove && !target.endsWith(`${sep}index.ts`)) {
          found.push(`${where} — reaches into ${relative(root, targetDir)}/ past its index.ts`)
        }
      }
    }
  }
  return found
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const found = violations()
  for (const line of found) console.error(line)
  if (found.length) {
    console.error(`check-imports: ${found.length} import rule violation(s)`)
    process.exit(1)
  }
  console.log('check-imports: dependency directions and folder APIs are respected')
}
