// Loading floe.yaml: read the file, apply FLOE_* environment overrides, validate, and refuse a bad
// file with one line that names the key path and the problem.
import { readFileSync } from 'node:fs'
import { parseDocument } from 'yaml'
import type { z } from 'zod'
import { FloeError } from '../errors.ts'
import {
  type CatalogSettings,
  checkStorageCredentials,
  refuseWrittenCatalogSecrets,
  resolveCatalog,
} from './catalog.ts'
import { type DatasetConfig, resolveDataset } from './datasets.ts'
import { type KafkaConfig, refuseWrittenSecrets, resolveKafka } from './kafka-security.ts'
import { configSchema, type RawConfig } from './schema.ts'
import { refuseWrittenStorageSecrets } from './storage-secrets.ts'

export interface FloeConfig extends Omit<RawConfig, 'datasets' | 'kafka' | 'catalog'> {
  /** With the PEM and secret files it names read. */
  kafka: KafkaConfig
  /** A SQL catalog resolved to its SQLite file or PostgreSQL connection, its password read. */
  catalog: CatalogSettings
  datasets: DatasetConfig[]
  /** Where the configuration came from, for logs. */
  source: string
}

const topLevel = new Set(['KAFKA', 'CATALOG', 'STORAGE', 'INGESTION', 'DATASETS', 'MAINTENANCE', 'METRICS', 'LOG'])

function camel(segment: string): string {
  return segment.toLowerCase().replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase())
}

function upperSnake(key: string): string {
  return key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase()
}

type Tree = Record<string, unknown> | unknown[]

/**
 * Applies `FLOE_A__B__C=value` to the tree: each segment names a key (UPPER_SNAKE of the
 * camelCase key), an array index, or a dataset by its name. Variables whose first segment is not
 * a top-level key (FLOE_CONFIG, FLOE_STACK_DIR, ...) are not overrides and are left alone.
 */
export function applyEnvironment(tree: Record<string, unknown>, env: NodeJS.ProcessEnv): string[] {
  const applied: string[] = []
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith('FLOE_') || value === undefined) continue
    const segments = name.slice('FLOE_'.length).split('__')
    if (!topLevel.has(segments[0] ?? '')) continue
    let node: Tree = tree
    for (const [i, segment] of segments.entries()) {
      const last = i === segments.length - 1
      let key: string | number
      if (Array.isArray(node)) {
        const byIndex = /^\d+$/.test(segment) ? Number(segment) : -1
        key =
          byIndex >= 0
            ? byIndex
            : node.findIndex((item) => upperSnake(String((item as { name?: unknown })?.name ?? '')) === segment)
        if (key < 0) throw new FloeError('CONFIG_INVALID', `${name}: no dataset named ${camel(segment)}`)
      } else {
        key = Object.keys(node).find((k) => upperSnake(k) === segment) ?? camel(segment)
      }
      if (last) {
        ;(node as Record<string | number, unknown>)[key] = value
      } else {
        const child = (node as Record<string | number, unknown>)[key]
        // `ssl: true` in the file and FLOE_KAFKA__SSL__CA_PEM in the environment: TLS with that CA.
        if (child === undefined || child === null || child === true)
          (node as Record<string | number, unknown>)[key] = {}
        node = (node as Record<string | number, unknown>)[key] as Tree
        if (typeof node !== 'object') throw new FloeError('CONFIG_INVALID', `${name}: ${segment} is not a section`)
      }
    }
    applied.push(name)
  }
  return applied
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing'
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'a list'
  if (typeof value === 'object') return 'a section'
  const text = JSON.stringify(value)
  return `${typeof value} ${text.length > 40 ? `${text.slice(0, 37)}...` : text}`
}

function valueAt(tree: unknown, path: PropertyKey[]): unknown {
  let node = tree
  for (const key of path) node = (node as Record<PropertyKey, unknown> | undefined)?.[key]
  return node
}

function keyPath(path: PropertyKey[]): string {
  return path.map((k, i) => (typeof k === 'number' ? `[${k}]` : `${i ? '.' : ''}${String(k)}`)).join('') || '(top)'
}

/** The first issue as `key.path: problem (got ...)`: one line an operator can act on. */
export function formatIssue(issue: z.core.$ZodIssue, tree: unknown): string {
  const path = keyPath(issue.path)
  if (issue.code === 'unrecognized_keys') {
    return `${keyPath([...issue.path, issue.keys[0] ?? ''])}: unknown key (a typo?)`
  }
  const found = valueAt(tree, issue.path)
  if (found === undefined && issue.code === 'invalid_type') return `${path}: missing (${issue.message})`
  return `${path}: ${issue.message} (got ${describe(found)})`
}

export function parseConfig(text: string, source: string, env: NodeJS.ProcessEnv = process.env): FloeConfig {
  const document = parseDocument(text, { prettyErrors: true })
  const error = document.errors[0]
  if (error) {
    const line = error.linePos?.[0]
    throw new FloeError(
      'CONFIG_INVALID',
      `${source}${line ? `:${line.line}:${line.col}` : ''}: not valid YAML: ${error.message.split('\n')[0]}`,
    )
  }
  const tree = (document.toJS() ?? {}) as Record<string, unknown>
  if (typeof tree !== 'object' || Array.isArray(tree))
    throw new FloeError('CONFIG_INVALID', `${source}: expected a YAML mapping`)
  refuseWrittenSecrets(tree, source)
  refuseWrittenCatalogSecrets(tree, source)
  refuseWrittenStorageSecrets(tree, source)
  applyEnvironment(tree, env)
  const parsed = configSchema.safeParse(tree)
  if (!parsed.success) {
    // A misspelt key also makes the key it meant "missing": report the typo, it is the cause.
    const issues = parsed.error.issues
    const first = issues.find((i) => i.code === 'unrecognized_keys') ?? issues[0]
    throw new FloeError('CONFIG_INVALID', `${source}: ${first ? formatIssue(first, tree) : 'invalid'}`)
  }
  checkStorageCredentials(parsed.data, source)
  const names = new Set<string>()
  const datasets = parsed.data.datasets.map((raw, i) => {
    if (names.has(raw.name))
      throw new FloeError('CONFIG_INVALID', `${source}: datasets[${i}].name: ${raw.name} appears twice`)
    names.add(raw.name)
    try {
      // A dataset without storage of its own uses the top-level one.
      return { ...resolveDataset(raw, i), storage: raw.storage ?? parsed.data.storage }
    } catch (error) {
      if (error instanceof FloeError) throw new FloeError('CONFIG_INVALID', `${source}: ${error.message}`)
      throw error
    }
  })
  return {
    ...parsed.data,
    kafka: resolveKafka(parsed.data.kafka, source),
    catalog: resolveCatalog(parsed.data.catalog, source),
    datasets,
    source,
  }
}

/** Loads the file named by `path`, or by FLOE_CONFIG. */
export function loadConfig(path: string | undefined, env: NodeJS.ProcessEnv = process.env): FloeConfig {
  const file = path ?? env.FLOE_CONFIG
  if (!file) throw new FloeError('CONFIG_INVALID', 'no configuration: pass --config FILE or set FLOE_CONFIG')
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    throw new FloeError('CONFIG_INVALID', `${file}: ${code === 'ENOENT' ? 'no such file' : `cannot read (${code})`}`)
  }
  return parseConfig(text, file, env)
}

const secretKeys =
  /^(password|secret|clientSecret|token|credential|connectionString|accountKey|key|keyPem|sasToken|accessKeyId|secretAccessKey|sessionToken)$/i

/**
 * The configuration with every secret replaced, for logs and `floe validate`. A PEM (a CA, a
 * certificate) is shortened to its kind whatever its key: a private key under a name not listed
 * here still never reaches a log.
 */
export function redact(value: unknown, key = ''): unknown {
  if (typeof value === 'string' && secretKeys.test(key)) return '***'
  if (typeof value === 'string' && value.startsWith('-----BEGIN '))
    return `(${value.slice(11, value.indexOf('-----', 11))} PEM)`
  if (Array.isArray(value)) return value.map((v) => redact(v))
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redact(v, k)]))
  }
  return value
}
