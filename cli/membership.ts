// This worker's membership in one dataset's consumer group, for the sender of the messages its
// coordinator and its drain send: the member id, and the group generation the member holds. The
// participant states both on every WRITE-STATUS it sends (its reader's own numbers, the ones the
// coordinator compares between senders of a partition), so this learns the generation from
// there. Before the participant's first message there is no generation to tell: -1, the
// protocol's "none".
import type { ControlMessage } from '../protocol/index.ts'

export class GroupMembership {
  readonly #memberId: () => string
  readonly #group: string
  /** The generation the participant last stated, and the member id it stated it for. */
  #stated = { memberId: '', generation: -1 }

  constructor(group: string, memberId: () => string) {
    this.#group = group
    this.#memberId = memberId
  }

  /** A message the participant sends: the newest generation it states is this member's. */
  sent(message: ControlMessage): void {
    if (message.group !== this.#group || message.sender.memberId === '') return
    this.#stated = { memberId: message.sender.memberId, generation: message.sender.generation }
  }

  /** A generation stated for another member id (before the member joined again) is none. */
  current(): { memberId: string; generation: number } {
    const memberId = this.#memberId()
    return { memberId, generation: memberId === this.#stated.memberId ? this.#stated.generation : -1 }
  }
}
