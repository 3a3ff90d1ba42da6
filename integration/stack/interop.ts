// The interop suite's engine (integration/interop/): Spark, as pyspark in the stack's venv, with
// Apache Iceberg's Spark runtime jar from Maven (integration/stack/spark/pom.xml). Heavy (pyspark
// is a source package of about 320 MB that pip builds into a wheel, the jar about 45 MB), so only
// `stack setup --interop` installs it; a plain setup leaves it out. A stamp in the venv of the
// interop requirements' and the constraints' hash makes a second run a no-op; recreating the venv
// (a changed requirements.txt) drops the stamp with pyspark.
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { jarDir, jarsReady, resolveJars } from './jars.ts'
import { paths, stackSources } from './layout.ts'

const requirements = join(stackSources, '..', 'interop', 'requirements.txt')
const constraints = join(stackSources, '..', 'constraints.txt')

function wantedHash(): string {
  return createHash('sha256').update(readFileSync(requirements)).update(readFileSync(constraints)).digest('hex')
}

function stampFile(dir: string): string {
  return join(paths(dir).venv, '.interop-sha256')
}

function pysparkReady(dir: string): boolean {
  const stamp = stampFile(dir)
  return existsSync(stamp) && readFileSync(stamp, 'utf8') === wantedHash()
}

/** Whether `stack setup --interop` has run since the pins last changed. */
export function interopReady(dir: string): boolean {
  return jarsReady('spark', dir) && pysparkReady(dir)
}

/** Installs what is missing into the venv (which `setup` made first). Returns what it did. */
export function setupInterop(dir: string): { jars: boolean; pyspark: boolean } {
  const jars = resolveJars('spark', dir)
  if (pysparkReady(dir)) return { jars, pyspark: false }
  execFileSync(
    paths(dir).python,
    ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '-r', requirements, '-c', constraints],
    { stdio: 'inherit' },
  )
  writeFileSync(stampFile(dir), wantedHash())
  return { jars, pyspark: true }
}

/** The jars a Spark session of the suite loads (spark.jars). */
export function sparkJars(dir: string): string[] {
  const folder = jarDir('spark', dir)
  return readdirSync(folder)
    .filter((name) => name.endsWith('.jar'))
    .map((name) => join(folder, name))
}
