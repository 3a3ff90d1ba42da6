// Where metadata files go and what version a file is, named the way Iceberg's catalogs and
// pyiceberg name them: `<metadata dir>/<5-digit version>-<uuid>.metadata.json`.
import { randomUUID } from 'node:crypto'
import { tableProperties } from './model.ts'

function trimSlashes(location: string): string {
  return location.replace(/\/+$/, '')
}

/** `write.metadata.path` if the table sets it, else `<location>/metadata`. */
export function metadataDirectory(metadata: { location: string; properties: Record<string, string> }): string {
  const configured = metadata.properties[tableProperties.metadataPath]
  return configured ? trimSlashes(configured) : `${trimSlashes(metadata.location)}/metadata`
}

/** `write.data.path` if the table sets it, else `<location>/data`: where its data files go. */
export function dataDirectory(metadata: { location: string; properties: Record<string, string> }): string {
  const configured = metadata.properties['write.data.path']
  return configured ? trimSlashes(configured) : `${trimSlashes(metadata.location)}/data`
}

export function metadataFileLocation(
  metadata: { location: string; properties: Record<string, string> },
  version: number,
  uuid: string = randomUUID(),
): string {
  return `${metadataDirectory(metadata)}/${String(version).padStart(5, '0')}-${uuid}.metadata.json`
}

const fileName = /^(\d+)-([0-9a-fA-F-]{36})(?:\.gz)?\.metadata\.json$/

/** The version of a metadata file named as above, or -1 when the name does not follow the pattern. */
export function metadataFileVersion(location: string): number {
  const name = location.slice(location.lastIndexOf('/') + 1)
  const match = fileName.exec(name)
  return match ? Number(match[1]) : -1
}
