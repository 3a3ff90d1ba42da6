// `npm run protocol:gen`: regenerates protocol/gen/ from floe_control.proto with buf and
// protoc-gen-es (both from node_modules, no network). Not part of Floe at run time.
//
// Options: TypeScript output (`target=ts`) with `.ts` import extensions, and enums as `as const`
// objects (`erasable_syntax=true`), so Node's type stripping runs the generated file as it is.
// The rename to `*.gen.ts` is ours: biome skips generated files by that suffix.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const protocolDir = import.meta.dirname
const root = join(protocolDir, '..')
const genDir = join(protocolDir, 'gen')
const bin = join(root, 'node_modules', '.bin')

const template = {
  version: 'v2',
  plugins: [
    {
      local: join(bin, 'protoc-gen-es'),
      out: mkdtempSync(join(tmpdir(), 'floe-protocol-gen-')),
      opt: ['target=ts', 'import_extension=ts', 'erasable_syntax=true'],
    },
  ],
}
const out = template.plugins[0]!.out

try {
  execFileSync(join(bin, 'buf'), ['generate', protocolDir, '--template', JSON.stringify(template)], {
    cwd: root,
    stdio: 'inherit',
  })
  for (const name of readdirSync(genDir)) if (name.endsWith('.gen.ts')) rmSync(join(genDir, name))
  for (const name of readdirSync(out)) {
    if (!name.endsWith('_pb.ts')) continue
    const target = name.replace(/\.ts$/, '.gen.ts')
    writeFileSync(join(genDir, target), readFileSync(join(out, name)))
    console.log(`protocol:gen wrote protocol/gen/${target}`)
  }
} finally {
  rmSync(out, { recursive: true, force: true })
}
