// Brownouts for fault tests: a service of the stack frozen by name keeps its sockets open but
// answers nothing (SIGSTOP), as a storage or broker that hangs does; thawing lets it go on.
import { stackDir } from './layout.ts'
import { freeze as freezeIn, thaw as thawIn } from './processes.ts'

/** Freezes a service of the stack by name ('azurite', 'kafka', 'iceberg-rest'). */
export function freeze(name: string): void {
  freezeIn(name, stackDir())
}

/** Thaws a frozen service of the stack by name; call it in t.after of any test that freezes. */
export function thaw(name: string): void {
  thawIn(name, stackDir())
}
