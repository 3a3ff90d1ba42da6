// Where a V8 CPU profile's time went, as text: the functions with the most self time, and the
// files (or packages) they live in. For profiles written by `node --cpu-prof`, e.g. by the
// workers of `node bench/scale.bench.ts --cpu-profile DIR`.
//
//   node bench/cpu-profile.ts <file.cpuprofile> [--top 40]
import { readFileSync } from 'node:fs'

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  children?: number[]
}
interface Profile {
  nodes: ProfileNode[]
  samples: number[]
  timeDeltas: number[]
}

const file = process.argv[2]
if (file === undefined) {
  console.error('usage: node bench/cpu-profile.ts <file.cpuprofile> [--top 40]')
  process.exit(2)
}
const topAt = process.argv.indexOf('--top')
const top = topAt > 0 ? Number(process.argv[topAt + 1]) : 40
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile

const byId = new Map(profile.nodes.map((n) => [n.id, n]))
const selfMicros = new Map<number, number>()
for (let i = 0; i < profile.samples.length; i++) {
  const id = profile.samples[i] as number
  selfMicros.set(id, (selfMicros.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0))
}
const total = [...selfMicros.values()].reduce((a, b) => a + b, 0)

/** A package's name for code under node_modules, the repository-relative path for ours. */
function placeOf(url: string): string {
  if (url === '') return '(native)'
  const modules = url.lastIndexOf('node_modules/')
  if (modules >= 0) {
    const rest = url.slice(modules + 'node_modules/'.length).split('/')
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : (rest[0] ?? url)
  }
  if (url.startsWith('node:')) return url
  const parts = url.replace(/^file:\/\//, '').split('/')
  return parts.slice(-2).join('/')
}

const functions = new Map<string, number>()
const places = new Map<string, number>()
for (const [id, micros] of selfMicros) {
  const node = byId.get(id)
  if (node === undefined) continue
  const { functionName, url, lineNumber } = node.callFrame
  const place = placeOf(url)
  const key = `${functionName || '(anonymous)'}  ${place}${url ? `:${lineNumber + 1}` : ''}`
  functions.set(key, (functions.get(key) ?? 0) + micros)
  places.set(place, (places.get(place) ?? 0) + micros)
}

const line = (micros: number, what: string) =>
  `${(micros / 1e6).toFixed(2).padStart(8)} s ${((100 * micros) / total).toFixed(1).padStart(5)} %  ${what}`
console.log(`${(total / 1e6).toFixed(2)} s sampled in ${file}`)
console.log('\nself time by place')
for (const [place, micros] of [...places].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(line(micros, place))
console.log('\nself time by function')
for (const [key, micros] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(line(micros, key))
