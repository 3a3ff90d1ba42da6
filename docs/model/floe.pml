/*
 * Floe's commit protocol as a Promela model for spin. docs/model/README.md explains it: how to
 * run it, its bounds, what each process stands for in the code, what it leaves out and why, and
 * the counterexample of each broken variant.
 *
 * Switches (spin -D...):
 *   NP=1|2              Kafka partitions of the dataset (records per partition: NR)
 *   NR=n                records per partition, offsets 0..NR-1
 *   MAXC=n              commit ids (rounds) the whole run may start, over all coordinators
 *   FAULTS=n            faults the run may inject: a crash of any process, a lost, duplicated or
 *                       reordered control message, a lost catalog reply
 *   REBALANCES=n        partition moves between the two workers
 *   LIVE                the liveness configuration: one coordinator, endless rounds (commit ids
 *                       reused once nothing refers to them), `timeout` as the commit timeout
 *   NO_CONTIGUITY       broken: the coordinator accepts any non-empty range
 *   NO_COMMIT_ID_LOOKUP broken: after an unknown outcome the commit loop never asks the table
 *                       whether its commit id landed
 *   STALE_CHECK         broken: the contiguity check runs once per round, against the offsets read
 *                       at START, not against each table the commit loop reloads
 */

#ifndef NP
#define NP 2
#endif
#ifndef NR
#define NR 2
#endif
#ifndef MAXC
#define MAXC 3
#endif
#ifndef FAULTS
#define FAULTS 1
#endif
#ifndef REBALANCES
#define REBALANCES 1
#endif

#define NW 2                 /* workers */
#define NS (NW * NP)         /* participant slots: one per worker and partition */
#define NONE 255
#define MAXTRY 2             /* commit attempts per round (appendFiles' retry policy) */
#define ALL ((1 << NP) - 1)

#ifdef LIVE
#define NC 1                 /* coordinators */
#define IDS 3                /* commit ids cycle through 1..IDS */
#define NIDS IDS
#else
#define NIDS MAXC
#define NC 2                 /* the owner of partition 0 and a zombie that still thinks it is */
#endif

mtype = { START, END, ACK, STATUS };
mtype = { COMMITTED, REJECTED };
mtype = { OK, CONFLICT };

/* ---- the catalog: the table and its compare-and-swap (shared/iceberg/commit/append.ts) ---- */
byte marker[NP];             /* floe.offsets.<group>: the next offset the table expects */
byte held[NP * NR];          /* how many times each record is in the table's data files */
byte landed[NIDS + 1];       /* commit id -> partitions its snapshot committed (floe.commit-id) */

/* The table's current snapshot. Only Floe commits in the model, and every commit moves some
 * partition's marker forward (an accepted range is never empty), so the marker vector names the
 * snapshot exactly: assert-ref-snapshot-id compares it. */
#define SNAP (marker[0] + (NP > 1 -> marker[NP - 1] * (NR + 1) : 0))

/* ---- Kafka ---- */
byte owner[NP];              /* the group's assignment: which worker owns each partition */

/* ---- the control topic: per reader, so that each fault hits one reader's view ---- */
chan toSlot[NS] = [2] of { mtype, byte, byte, byte, byte };   /* type, commit id, partition, a, b */
chan toCoord[NC] = [2] of { mtype, byte, byte, byte, byte };
byte coordOf[NIDS + 1];      /* which coordinator chose a commit id (who reads its WRITE-STATUS) */

/* ---- catalog requests: a request may wait, land late, or lose its reply ---- */
chan req = [2] of { byte, byte, byte, byte, byte, byte, byte };  /* coord, base snapshot, commit id, s0, e0, s1, e1 */
chan reply[NC] = [2] of { byte, byte, mtype };                  /* commit id, base snapshot, result */

/* ---- faults ---- */
byte faults = FAULTS;
byte rebalances = REBALANCES;
bool crashSlot[NS];
bool up[NS];                  /* the participant runs: synced, its control consumer reading */
bool crashCoord[NC];
bool zombie;                 /* a second coordinator runs rounds: one that lost partition 0 and goes on */

byte nextId;                 /* the last commit id handed out */

/* A worker's control consumer reads from the end of the topic while it runs: a participant that
 * is not running (never synced, crashed, revoked) never sees what was sent meanwhile. */
inline postSlot(j, t, c, p, a, b) {
  if
  :: up[j] -> toSlot[j]!t, c, p, a, b
  :: !up[j] -> skip
  fi
}

/* spin -m: a send to a full queue loses the message instead of blocking the sender. */
inline post(ch, t, c, p, a, b) {
  ch!t, c, p, a, b
}

/* The table's truth, checked after every commit (the only place the table changes). */
inline checkTable() {
  i = 0;
  do
  :: i < NP * NR ->
     assert(held[i] <= 1);                                   /* every record at most once */
     assert(held[i] == ((i % NR) < marker[i / NR] -> 1 : 0)); /* exactly the records before the marker */
     i++
  :: else -> break
  od
}

inline commitRange(p, s, e) {
  if
  :: s != NONE ->
     assert(e >= marker[(p)]);                                  /* the marker only grows */
     o = (s);
     do
     :: o < e -> held[(p) * NR + o]++; o++
     :: else -> break
     od;
     marker[(p)] = e;
     acc = acc | (1 << (p))
  :: else -> skip
  fi
}

/* catalog.commitTable: the REST catalog applies one request atomically. */
proctype Catalog() {
  byte k, b, c, s0, e0, s1, e1, acc, o, i;
end_catalog:
  do
  :: atomic {
       req?k, b, c, s0, e0, s1, e1 ->
       if
       :: b == SNAP ->                     /* assert-ref-snapshot-id on main holds */
          acc = 0;
          commitRange(0, s0, e0);
          commitRange(NP - 1, s1, e1);
          landed[c] = landed[c] | acc;
          checkTable();
          if
          :: nfull(reply[k]) -> reply[k]!c, b, OK
          :: full(reply[k]) -> skip        /* nobody listens: the reply is lost */
          fi
       :: else ->
          if
          :: nfull(reply[k]) -> reply[k]!c, b, CONFLICT
          :: full(reply[k]) -> skip
          fi
       fi
     }
  od
}

/* ---- participant: one per worker and partition (participant/partition-slot.ts, partition-work.ts) ----
 * The WAL of the slot is two numbers: ready files cover [cs, rot), the open segments [rot, pos).
 * A crash loses the open segments; ready files survive and are judged by recovery. */
proctype Slot(byte w; byte p) {
  byte i = w * NP + p;
  byte cs, rot, pos, m;
  byte repC, repEnd;          /* the round this slot last reported, and where its range ended */
  bool live;                  /* synced: positioned from the table, WAL recovered */
  mtype t; byte c, pp, a, b;
  chan inbox = toSlot[w * NP + p];
  xr inbox;

/* #sync: position from the table (positioning.ts startingPoint) and recover the WAL
 * (wal/recovery-plan.ts): what is open is rotated first (#letGo); the ready chain is kept only if
 * it starts exactly at the table's offset, otherwise it is deleted and read again from there. */
#define SYNC \
  atomic { \
    m = marker[p]; rot = pos; \
    if \
    :: cs == m -> skip \
    :: else -> cs = m; rot = m \
    fi; \
    pos = rot; repC = 0; live = true; up[i] = true \
  }

/* The control consumer stops: what it had not read is gone for it. */
#define STOP \
  live = false; up[i] = false; repC = 0; \
  do \
  :: nempty(inbox) -> inbox?t, c, pp, a, b \
  :: empty(inbox) -> break \
  od

/* One control message (participant.machine.ts). Messages of any round are taken: with two
 * coordinators, the newest START/END seen is the slot's round. */
#define HANDLE \
  if \
  :: !live -> skip \
  :: live && t == START -> \
     if \
     :: cs != b -> SYNC                 /* out of line with START's offset (machine/line.ts isOutOfLine) */ \
     :: else -> skip \
     fi \
  :: live && t == END ->                /* #flush: rotate, report the whole uncommitted chain */ \
     atomic { rot = pos; repC = c; repEnd = rot; post(toCoord[coordOf[c]], STATUS, c, p, cs, rot) } \
  :: live && t == ACK && c != repC -> skip \
  :: live && t == ACK && c == repC && a == COMMITTED && b == repEnd -> \
     assert(marker[p] >= b);            /* ACK only after the catalog confirmed it */ \
     cs = b; repC = 0                   /* #acknowledge: the files before b are deleted */ \
  :: live && t == ACK && c == repC && (a == REJECTED || b != repEnd) -> SYNC \
  fi

end_restart:
     {
end_slot:
       do
       :: !live && owner[p] == w -> SYNC                  /* assigned, or restarted */
       :: live && pos < NR -> pos++                       /* a record read into the open segment */
       :: atomic { live && owner[p] != w -> rot = pos; STOP }  /* revoked: rotate, keep the files */
#ifdef LIVE
       /* weak fairness is per process in spin: say that the consumer keeps up with the topic */
       :: (!live || pos == NR) && nempty(inbox) -> inbox?t, c, pp, a, b; HANDLE
#else
       :: inbox?t, c, pp, a, b -> HANDLE
#endif
       :: atomic { faults > 0 && nempty(inbox) -> faults--; inbox?t, c, pp, a, b } /* lost */
       :: atomic { faults > 0 && nempty(inbox) ->                                 /* duplicated: */
            faults--; inbox?t, c, pp, a, b; inbox!t, c, pp, a, b } -> HANDLE         /* a copy comes later */
       :: atomic { faults > 0 && len(inbox) > 1 ->
            faults--; inbox?t, c, pp, a, b; inbox!t, c, pp, a, b }           /* reordered */
       od
     } unless {
       crashSlot[i] -> crashSlot[i] = false; pos = rot; STOP   /* ready files survive, open ones do not */
     };
     goto end_restart
}

/* ---- coordinator (coordinator.machine.ts round, commit-round.ts commitRound) ---- */
proctype Coord(byte k) {
  byte c, p, w, got, acc, rej, base, tries, res;
  byte m[NP], s[NP], e[NP];
  mtype t, outcome;
  bool uncertain;
  byte a, b, cc;
  chan inbox = toCoord[k];
  xr inbox;

end_dormant:
  (k == 0 || zombie);                                     /* the second one exists only as a fault */
round:
end_rounds_spent:
#ifdef LIVE
     atomic {
       empty(req) ->                                       /* no request of the id to reuse waits */
       c = nextId % IDS + 1; nextId = c; landed[c] = 0; coordOf[c] = k
     };
#else
     atomic { nextId < MAXC -> nextId++; c = nextId; coordOf[c] = k };
#endif
     {
       /* START-COMMIT: the table's offsets as read now */
       atomic {
         p = 0;
         do
         :: p < NP -> m[p] = marker[p]; s[p] = NONE; e[p] = NONE; p++
         :: else -> break
         od
       }
       atomic {
         p = 0;
         do
         :: p < NP ->
            w = 0;
            do
            :: w < NW -> postSlot(w * NP + p, START, c, p, 0, m[p]); w++
            :: else -> break
            od;
            p++
         :: else -> break
         od
       }
       /* END-COMMIT: the cut */
       atomic {
         p = 0;
         do
         :: p < NP ->
            w = 0;
            do
            :: w < NW -> postSlot(w * NP + p, END, c, p, 0, 0); w++
            :: else -> break
            od;
            p++
         :: else -> break
         od
       }
       /* collect WRITE-STATUS; the newest status of a partition counts (round-tracker.ts) */
       got = 0;
       do
       :: inbox?t, cc, p, a, b ->
          if
          :: cc == c -> s[p] = a; e[p] = b; got = got | (1 << p)
          :: else -> skip                                 /* another round's: ignored */
          fi
       :: atomic { faults > 0 && nempty(inbox) -> faults--; inbox?t, cc, p, a, b }  /* lost */
       :: atomic { faults > 0 && len(inbox) > 1 ->
            faults--; inbox?t, cc, p, a, b; inbox!t, cc, p, a, b }                 /* reordered */
       :: got == ALL -> break
#ifdef LIVE
       :: timeout -> break                                /* commit timeout: what answered */
#else
       :: got != ALL -> break                             /* commit timeout, at any moment */
#endif
       od;

       /* the commit loop: appendFiles with planCommit as its re-check */
       tries = 0; uncertain = false; outcome = 0; acc = 0; rej = 0;
#ifdef STALE_CHECK
       /* broken: checked once, against START's offsets */
       atomic {
         p = 0;
         do
         :: p < NP ->
            if
            :: (got & (1 << p)) && e[p] > s[p] && s[p] == m[p] -> acc = acc | (1 << p)
            :: (got & (1 << p)) && e[p] > s[p] && s[p] != m[p] -> rej = rej | (1 << p)
            :: else -> skip
            fi;
            p++
         :: else -> break
         od
       }
#endif
       do
       :: tries >= MAXTRY -> break                        /* gave up: no ACK, files stay */
       :: tries < MAXTRY ->
          tries++;
          atomic {
            /* reload the table */
            base = SNAP;
#ifndef NO_COMMIT_ID_LOOKUP
            if
            :: uncertain && landed[c] != 0 -> outcome = COMMITTED  /* found by its commit id */
            :: else -> skip
            fi;
#endif
#ifndef STALE_CHECK
            if
            :: outcome == 0 ->
               acc = 0; rej = 0; p = 0;
               do
               :: p < NP ->
                  m[p] = marker[p];
                  if
                  :: (got & (1 << p)) && e[p] > s[p] ->
#ifdef NO_CONTIGUITY
                     acc = acc | (1 << p)
#else
                     if                                       /* contiguity.ts checkContiguity */
                     :: s[p] == m[p] -> acc = acc | (1 << p)
                     :: else -> rej = rej | (1 << p)
                     fi
#endif
                  :: else -> skip
                  fi;
                  p++
               :: else -> break
               od
            :: else -> skip
            fi;
#endif
            if
            :: outcome == 0 && acc == 0 -> outcome = REJECTED   /* COMMIT_REJECTED: nothing to commit */
            :: else -> skip
            fi
          }
          if
          :: outcome != 0 -> break
          :: else -> skip
          fi;
          atomic {
            do                                            /* replies of older attempts are stale */
            :: reply[k]?cc, b, res
            :: empty(reply[k]) -> break
            od;
            req!k, base, c,
              ((acc & 1) -> s[0] : NONE), ((acc & 1) -> e[0] : NONE),
              ((NP > 1 && (acc & 2)) -> s[NP - 1] : NONE), ((NP > 1 && (acc & 2)) -> e[NP - 1] : NONE)
          }
          if
          :: reply[k]??eval(c), eval(base), res ->
             if
             :: res == OK -> outcome = COMMITTED; break
             :: else -> skip                              /* conflict: reload and retry */
             fi
          :: atomic { faults > 0 -> faults-- }; uncertain = true  /* the reply is lost: unknown outcome */
          :: timeout -> uncertain = true
          fi
       od;

       /* ACK-COMMIT (commit-content.ts roundAck) */
       atomic {
         p = 0;
         do
         :: p < NP ->
            if
            :: outcome == COMMITTED && (acc & (1 << p)) ->
               assert(landed[c] & (1 << p));              /* the ACK says what the table holds */
               w = 0;
               do
               :: w < NW -> postSlot(w * NP + p, ACK, c, p, COMMITTED, e[p]); w++
               :: else -> break
               od
            :: outcome != 0 && (rej & (1 << p)) ->
               assert(!(landed[c] & (1 << p)));           /* a rejection names nothing committed */
               w = 0;
               do
               :: w < NW -> postSlot(w * NP + p, ACK, c, p, REJECTED, m[p]); w++
               :: else -> break
               od
            :: else -> skip
            fi;
            p++
         :: else -> break
         od
       }
     } unless {
       crashCoord[k] -> crashCoord[k] = false             /* restart: a new round, a new commit id */
     };
     goto round
}

/* ---- faults: any of them at any step, within the budget ---- */
proctype Faults() {
  byte j;
  do
  :: atomic { faults > 0 -> faults--; select(j : 0 .. NS - 1); crashSlot[j] = true }    /* participant crash */
  :: atomic { faults > 0 -> faults--; select(j : 0 .. NC - 1); crashCoord[j] = true }   /* coordinator crash */
#ifndef LIVE
  :: atomic { faults > 0 && !zombie -> faults--; zombie = true }                        /* zombie coordinator */
#endif
  :: atomic { rebalances > 0 -> rebalances--; select(j : 0 .. NP - 1); owner[j] = 1 - owner[j] }
  :: faults == 0 && rebalances == 0 -> break
  od
}

init {
  byte k;
  atomic {
    k = 0;
    do
    :: k < NP -> owner[k] = k % NW; k++
    :: else -> break
    od;
    run Catalog();
    run Faults();
    k = 0;
    do
    :: k < NS -> run Slot(k / NP, k % NP); k++
    :: else -> break
    od;
    k = 0;
    do
    :: k < NC -> run Coord(k); k++
    :: else -> break
    od
  }
}

#ifdef LIVE
/* Once the faults are spent, every record ends up in the table. */
ltl committed { <> (marker[0] == NR && marker[NP - 1] == NR) }
#endif
