// Java parts of the stack come from Maven Central as plain jars: a resolver-only pom per server,
// copied with maven-dependency-plugin into .stack/jars/<name>. A stamp of the pom's hash makes a
// second setup a no-op, and a changed pom re-resolves.
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { paths, stackSources } from './layout.ts'

const dependencyPlugin = 'org.apache.maven.plugins:maven-dependency-plugin:3.8.1'

export type JavaPart = 'kafka' | 'iceberg-rest' | 'spark'

export function jarDir(part: JavaPart, dir: string): string {
  return join(paths(dir).jars, part)
}

export function classpath(part: JavaPart, dir: string): string {
  return `${jarDir(part, dir)}/*`
}

export function jarsReady(part: JavaPart, dir: string): boolean {
  const stamp = join(jarDir(part, dir), '.pom-sha256')
  return existsSync(stamp) && readFileSync(stamp, 'utf8') === pomHash(part)
}

function pomHash(part: JavaPart): string {
  return createHash('sha256')
    .update(readFileSync(join(stackSources, part, 'pom.xml')))
    .digest('hex')
}

/** Resolves the part's jars unless the stamp says they match the pom. Returns whether it ran Maven. */
export function resolveJars(part: JavaPart, dir: string): boolean {
  if (jarsReady(part, dir)) return false
  const out = jarDir(part, dir)
  rmSync(out, { recursive: true, force: true })
  mkdirSync(out, { recursive: true })
  execFileSync(
    'mvn',
    [
      '-q',
      '-B',
      '-Dstyle.color=never',
      '-f',
      join(stackSources, part, 'pom.xml'),
      `${dependencyPlugin}:copy-dependencies`,
      '-DincludeScope=runtime',
      `-DoutputDirectory=${out}`,
    ],
    { stdio: 'inherit' },
  )
  if (readdirSync(out).filter((f) => f.endsWith('.jar')).length === 0) {
    throw new Error(`Maven resolved no jars for ${part}`)
  }
  writeFileSync(join(out, '.pom-sha256'), pomHash(part))
  return true
}

export function javaCommand(): string {
  return process.env.JAVA_HOME ? join(process.env.JAVA_HOME, 'bin', 'java') : 'java'
}
