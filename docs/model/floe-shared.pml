/*
 * Floe's commit protocol with shared segments (docs/architecture.md, "Shared segments"): one
 * worker's files hold the rows of all its Kafka partitions of the dataset, and every file of one
 * rotation records the ranges of the whole rotation. Same catalog, faults and coordinator round as
 * floe.pml; what changes is the unit of the WAL (a rotation of a worker, not a partition's range)
 * and the coordinator's check (a rotation is accepted only if every range it claims is contiguous).
 * docs/model/README.md explains the run, the bounds and the broken variants.
 *
 * Switches (spin -D...):
 *   NR=n                records per partition, offsets 0..NR-1 (two partitions, two workers)
 *   MAXC=n              commit ids (rounds) the whole run may start, over all coordinators
 *   FAULTS=n            faults: a crash of any process, a lost, duplicated or reordered control
 *                       message, a lost catalog reply, a zombie coordinator
 *   REBALANCES=n        partition moves between the two workers
 *   PARTIAL_ROTATION    broken: the coordinator accepts a rotation when ANY of its ranges is
 *                       contiguous (and commits its files whole, as it must)
 *   UNCLAIM_REVOKED     broken: a worker that loses a partition keeps its rotations and stops
 *                       claiming the lost partition's ranges in them ("the new owner reports it"),
 *                       though the files still hold those rows
 */

#ifndef NR
#define NR 1
#endif
#ifndef MAXC
#define MAXC 2
#endif
#ifndef FAULTS
#define FAULTS 0
#endif
#ifndef REBALANCES
#define REBALANCES 1
#endif

#define NP 2                 /* Kafka partitions: two, so that a file can hold two ranges */
#define NW 2                 /* workers */
#define NC 2                 /* coordinators: the owner of partition 0 and a zombie */
#define NONE 255
#define MAXTRY 2             /* commit attempts per round */
#define MAXROT (NP * NR)     /* rotations one worker holds at once: each holds a non-empty range */
#define REP 2                /* rotations one WRITE-STATUS carries (the rest wait for a later round) */
#define ALLW ((1 << NW) - 1)
#define NIDS MAXC

mtype = { START, END, ACK };
mtype = { OK, CONFLICT };

/* ---- the catalog ---- */
byte marker[NP];             /* floe.offsets.<group> */
byte held[NP * NR];          /* how many times each record is in the table's data files */
bool landed[NIDS + 1];       /* commit id -> its snapshot landed (floe.commit-id) */
#define SNAP (marker[0] + marker[1] * (NR + 1))

/* ---- Kafka ---- */
byte owner[NP];

/* ---- what each round collected: per commit id, worker, reported rotation and partition ----
 * Files are immutable once rotated and their objects named by UUID, so a request that lands late
 * still commits exactly these rows. rS/rE: the rows the files hold; rM: the partitions whose ranges
 * the rotation claims (in the correct model, every partition it holds rows of). */
#define RX(c, w, r) (((c) * NW + (w)) * REP + (r))
byte rS[(NIDS + 1) * NW * REP * NP];
byte rE[(NIDS + 1) * NW * REP * NP];
byte rM[(NIDS + 1) * NW * REP];

/* ---- control topic ---- */
chan toW[NW] = [2] of { mtype, byte, byte, byte };       /* type, commit id, a, b */
/* WRITE-STATUS of one worker: commit id, worker, then per reported rotation: s0, e0, s1, e1, claims */
chan toCoord[NC] = [2] of { byte, byte, byte, byte, byte, byte, byte, byte, byte, byte, byte, byte };
byte coordOf[NIDS + 1];

/* catalog requests: coord, base snapshot, commit id, accepted rotations (bits w*REP+r), walk order */
chan req = [2] of { byte, byte, byte, byte, byte };
chan reply[NC] = [2] of { byte, byte, mtype };

byte faults = FAULTS;
byte rebalances = REBALANCES;
bool crashW[NW];
bool up[NW];                 /* the worker's control consumer reads */
bool crashCoord[NC];
bool zombie;
byte nextId;

inline postW(w, t, c, a, b) {
  if
  :: up[w] -> toW[w]!t, c, a, b
  :: else -> skip
  fi
}

inline checkTable() {
  i = 0;
  do
  :: i < NP * NR ->
     assert(held[i] <= 1);
     assert(held[i] == ((i % NR) < marker[i / NR] -> 1 : 0));
     i++
  :: else -> break
  od
}

/* One accepted rotation: every row its files hold goes in; each claimed range moves its marker. */
inline commitRotation(x) {
  p = 0;
  do
  :: p < NP ->
     if
     :: rS[(x) * NP + p] != NONE ->
        o = rS[(x) * NP + p];
        do
        :: o < rE[(x) * NP + p] -> held[p * NR + o]++; o++
        :: else -> break
        od;
        if
        :: rM[x] & (1 << p) ->
           assert(rE[(x) * NP + p] >= marker[p]);       /* the marker only grows */
           marker[p] = rE[(x) * NP + p]
        :: else -> skip
        fi
     :: else -> skip
     fi;
     p++
  :: else -> break
  od
}

proctype Catalog() {
  byte k, b, c, acc, first, ww, w, r, p, o, i;
end_catalog:
  do
  :: atomic {
       req?k, b, c, acc, first ->
       if
       :: b == SNAP ->
          ww = 0;                                       /* in the coordinator's walk order */
          do
          :: ww < NW ->
             w = (first + ww) % NW; r = 0;
             do
             :: r < REP ->
                if
                :: acc & (1 << (w * REP + r)) -> commitRotation(RX(c, w, r))
                :: else -> skip
                fi;
                r++
             :: else -> break
             od;
             ww++
          :: else -> break
          od;
          landed[c] = true;
          checkTable();
          if
          :: nfull(reply[k]) -> reply[k]!c, b, OK
          :: full(reply[k]) -> skip
          fi
       :: else ->
          if
          :: nfull(reply[k]) -> reply[k]!c, b, CONFLICT
          :: full(reply[k]) -> skip
          fi
       fi;
       k = 0; b = 0; c = 0; acc = 0; first = 0; ww = 0; w = 0; r = 0; p = 0; o = 0; i = 0
     }
  od
}

/* ---- a worker's participant: all its partitions of the dataset, one shared WAL ----
 * Open segments: per partition [rot, pos). Ready rotations 0..n-1, oldest first: per partition the
 * rows [s, e) its files hold (NONE: none) and the claim mask. */
proctype Worker(byte w) {
  byte pos[NP], rot[NP], nx[NP];
  bool live[NP];
  byte s[MAXROT * NP], e[MAXROT * NP], m[MAXROT];
  byte n, repC, i, j, p, any, chains, behind, cs, had;
  mtype t; byte c, a, b;
  chan inbox = toW[w];
  xr inbox;

/* Cut: every open segment rotates at once, so the rotation's range of each partition is exactly
 * the positions read since the last cut, and its files together hold every row of those ranges. */
#define CUT \
  any = 0; p = 0; \
  do \
  :: p < NP -> if :: pos[p] > rot[p] -> any = any | (1 << p) :: else -> skip fi; p++ \
  :: else -> break \
  od; \
  if \
  :: any != 0 -> \
     assert(n < MAXROT); \
     p = 0; \
     do \
     :: p < NP -> \
        if \
        :: any & (1 << p) -> s[n * NP + p] = rot[p]; e[n * NP + p] = pos[p]; rot[p] = pos[p] \
        :: else -> s[n * NP + p] = NONE; e[n * NP + p] = NONE \
        fi; \
        p++ \
     :: else -> break \
     od; \
     m[n] = any; n++ \
  :: else -> skip \
  fi; \
  any = 0

/* The walk (recovery, resync, revocation, ACK): from the offsets nx[], oldest rotation first. A
 * rotation whose claimed ranges all end at or before nx is committed: deleted. One whose claimed
 * ranges all start at nx, of partitions this worker owns, is kept and moves nx on. Any other is
 * dropped whole (a stale range, a revoked partition): nx does not move for its partitions, so their
 * later rotations drop too, and the partitions read again from nx. */
#define WALK \
  i = 0; j = 0; \
  do \
  :: i < n -> \
     UNCLAIM \
     behind = 1; chains = 1; p = 0; \
     do \
     :: p < NP -> \
        if \
        :: m[i] & (1 << p) -> \
           if :: e[i * NP + p] > nx[p] -> behind = 0 :: else -> skip fi; \
           if :: s[i * NP + p] != nx[p] || owner[p] != w -> chains = 0 :: else -> skip fi \
        :: else -> skip \
        fi; \
        p++ \
     :: else -> break \
     od; \
     if \
     :: behind -> skip \
     :: !behind && chains -> \
        p = 0; \
        do \
        :: p < NP -> \
           s[j * NP + p] = s[i * NP + p]; e[j * NP + p] = e[i * NP + p]; \
           if :: m[i] & (1 << p) -> nx[p] = e[i * NP + p] :: else -> skip fi; \
           p++ \
        :: else -> break \
        od; \
        m[j] = m[i]; j++ \
     :: else -> skip \
     fi; \
     i++ \
  :: else -> break \
  od; \
  i = j; \
  do \
  :: i < n -> m[i] = 0; p = 0; \
     do :: p < NP -> s[i * NP + p] = 0; e[i * NP + p] = 0; p++ :: else -> break od; i++ \
  :: else -> break \
  od; \
  n = j; i = 0; j = 0; behind = 0; chains = 0

#ifdef UNCLAIM_REVOKED
/* broken: the lost partition's range is no longer claimed; its rows stay in the files */
#define UNCLAIM \
  p = 0; \
  do \
  :: p < NP -> if :: owner[p] != w -> m[i] = m[i] & ~(1 << p) :: else -> skip fi; p++ \
  :: else -> break \
  od;
#else
#define UNCLAIM
#endif

/* The partitions that claim a range in some rotation (before a walk). */
#define CLAIMED \
  had = 0; i = 0; \
  do :: i < n -> had = had | m[i]; i++ :: else -> break od; i = 0

/* After a walk: a partition this worker syncs (all) continues at nx, and so does one of its live
 * partitions whose rotations the walk judged (had): rewound to the start of its first dropped one. */
#define PLACE(all) \
  p = 0; \
  do \
  :: p < NP -> \
     if \
     :: owner[p] == w && (all || (live[p] && (had & (1 << p)))) -> \
        live[p] = true; pos[p] = nx[p]; rot[p] = nx[p] \
     :: owner[p] != w && all -> live[p] = false \
     :: else -> skip \
     fi; \
     nx[p] = 0; p++ \
  :: else -> break \
  od; \
  had = 0

/* #sync: positioned from the table (invariant 2), for every partition the worker owns. */
#define RESYNC \
  CUT; nx[0] = marker[0]; nx[1] = marker[1]; WALK; PLACE(1); repC = 0; up[w] = true
#define SYNC d_step { RESYNC }

/* A partition's chain starts at its first claimed range, else at its open segment. */
#define CHAINSTART(q) \
  cs = rot[q]; i = n; \
  do \
  :: i > 0 -> i--; if :: m[i] & (1 << q) -> cs = s[i * NP + q] :: else -> skip fi \
  :: else -> break \
  od; i = 0

/* WRITE-STATUS: the two oldest rotations, rows and claims (a later one waits for a later round). */
#define REPORT \
  toCoord[coordOf[c]]!c, w, \
    (n > 0 -> s[0] : NONE), (n > 0 -> e[0] : NONE), (n > 0 -> s[1] : NONE), (n > 0 -> e[1] : NONE), \
    (n > 0 -> m[0] : 0), \
    (n > 1 -> s[2] : NONE), (n > 1 -> e[2] : NONE), (n > 1 -> s[3] : NONE), (n > 1 -> e[3] : NONE), \
    (n > 1 -> m[1] : 0)

/* One control message; the caller holds it atomic. */
#define HANDLE \
  if \
  :: t == START -> \
     CHAINSTART(0); any = (live[0] && cs != a); \
     CHAINSTART(1); any = any || (live[1] && cs != b); \
     cs = 0; \
     if \
     :: any -> any = 0; RESYNC                            /* out of line with START's offsets */ \
     :: else -> skip \
     fi \
  :: t == END -> CUT; repC = c; REPORT \
  :: t == ACK && c != repC -> skip \
  :: t == ACK && c == repC -> \
     assert(marker[0] >= a && marker[1] >= b);          /* ACK only after the catalog confirmed */ \
     CUT; CLAIMED; nx[0] = a; nx[1] = b; WALK; PLACE(0); repC = 0 \
  fi

/* the message handled is not state worth telling apart */
#define FORGET t = 0; c = 0; a = 0; b = 0

end_restart:
  {
end_worker:
    do
    :: (!live[0] && owner[0] == w) || (!live[1] && owner[1] == w) -> SYNC    /* assigned, or restarted */
    :: live[0] && pos[0] < NR -> pos[0]++                                    /* a record read */
    :: live[1] && pos[1] < NR -> pos[1]++
    :: (live[0] && owner[0] != w) || (live[1] && owner[1] != w) -> SYNC      /* revoked (or a zombie: never) */
    :: atomic { inbox?t, c, a, b -> HANDLE; FORGET }
    :: atomic { faults > 0 && nempty(inbox) -> faults--; inbox?t, c, a, b; FORGET }  /* lost */
    :: atomic { faults > 0 && nempty(inbox) -> faults--; inbox?t, c, a, b; inbox!t, c, a, b }; /* duplicated: */
       atomic { HANDLE; FORGET }                                                      /* a copy comes later */
    :: atomic { faults > 0 && len(inbox) > 1 -> faults--; inbox?t, c, a, b; inbox!t, c, a, b; FORGET }
    od
  } unless {
    atomic {
      crashW[w] -> crashW[w] = false;                 /* open segments lost, ready rotations kept */
      pos[0] = rot[0]; pos[1] = rot[1]; live[0] = false; live[1] = false; repC = 0; up[w] = false;
      do
      :: nempty(inbox) -> inbox?t, c, a, b
      :: empty(inbox) -> break
      od
    }
  };
  goto end_restart
}

/* ---- coordinator ---- */
proctype Coord(byte k) {
  byte c, cc, ww, got, acc, base, tries, res, first, x, p, r, w, any, all;
  byte nx[NP];
  byte a0, a1, a2, a3, a4, b0, b1, b2, b3, b4;
  mtype outcome;
  bool uncertain;
  chan inbox = toCoord[k];
  xr inbox;

end_dormant:
  (k == 0 || zombie);
round:
end_rounds_spent:
  atomic { nextId < MAXC -> nextId++; c = nextId; coordOf[c] = k };
  {
    atomic {
      w = 0;
      do
      :: w < NW -> postW(w, START, c, marker[0], marker[1]); w++
      :: else -> break
      od
    }
    atomic {
      w = 0;
      do
      :: w < NW -> postW(w, END, c, 0, 0); w++
      :: else -> break
      od
    }
    /* collect: the newest WRITE-STATUS of each worker for this commit id counts */
    got = 0;
    do
    :: inbox?cc, w, a0, a1, a2, a3, a4, b0, b1, b2, b3, b4 ->
       atomic {
         if
         :: cc == c ->
            x = RX(c, w, 0); rS[x * NP] = a0; rE[x * NP] = a1; rS[x * NP + 1] = a2; rE[x * NP + 1] = a3; rM[x] = a4;
            x = RX(c, w, 1); rS[x * NP] = b0; rE[x * NP] = b1; rS[x * NP + 1] = b2; rE[x * NP + 1] = b3; rM[x] = b4;
            got = got | (1 << w)
         :: else -> skip
         fi;
         cc = 0; w = 0; x = 0; a0 = 0; a1 = 0; a2 = 0; a3 = 0; a4 = 0; b0 = 0; b1 = 0; b2 = 0; b3 = 0; b4 = 0
       }
    :: atomic { faults > 0 && nempty(inbox) -> faults--; inbox?cc, w, a0, a1, a2, a3, a4, b0, b1, b2, b3, b4 }
    :: got == ALLW -> break
    :: got != ALLW -> break                            /* commit timeout, at any moment */
    od;
    /* which worker's rotations the walk takes first: either (safety must not depend on it) */
    if
    :: first = 0
    :: first = 1
    fi;

    tries = 0; uncertain = false; outcome = 0; acc = 0;
    do
    :: tries >= MAXTRY -> break
    :: tries < MAXTRY ->
       tries++;
       atomic {
         base = SNAP;
         if
         :: uncertain && landed[c] -> outcome = OK             /* found by its commit id */
         :: else -> skip
         fi;
         if
         :: outcome == 0 ->
            /* the check, on the table just loaded: a rotation is accepted only if EVERY range it
             * claims starts at the table's offset (advanced by the rotations accepted before it) */
            acc = 0; nx[0] = marker[0]; nx[1] = marker[1]; ww = 0;
            do
            :: ww < NW ->
               w = (first + ww) % NW;
               if
               :: got & (1 << w) ->
                  r = 0;
                  do
                  :: r < REP ->
                     x = RX(c, w, r);
                     if
                     :: rM[x] != 0 ->
                        any = 0; all = 1; p = 0;
                        do
                        :: p < NP ->
                           if
                           :: (rM[x] & (1 << p)) && rS[x * NP + p] == nx[p] -> any = 1
                           :: (rM[x] & (1 << p)) && rS[x * NP + p] != nx[p] -> all = 0
                           :: else -> skip
                           fi;
                           p++
                        :: else -> break
                        od;
#ifdef PARTIAL_ROTATION
                        all = any;
#endif
                        if
                        :: all ->
                           acc = acc | (1 << (w * REP + r)); p = 0;
                           do
                           :: p < NP -> if :: rM[x] & (1 << p) -> nx[p] = rE[x * NP + p] :: else -> skip fi; p++
                           :: else -> break
                           od
                        :: else -> skip                        /* rejected whole */
                        fi
                     :: else -> skip
                     fi;
                     r++
                  :: else -> break
                  od
               :: else -> skip
               fi;
               ww++
            :: else -> break
            od;
            if
            :: acc == 0 -> outcome = CONFLICT                  /* nothing to commit: every rotation rejected */
            :: else -> skip
            fi
         :: else -> skip
         fi;
         ww = 0; w = 0; r = 0; x = 0; p = 0; any = 0; all = 0
       }
       if
       :: outcome != 0 -> break
       :: else -> skip
       fi;
       atomic {
         do
         :: reply[k]?cc, x, res                        /* replies of older attempts are stale */
         :: empty(reply[k]) -> break
         od;
         cc = 0; x = 0;
         req!k, base, c, acc, first
       }
       if
       :: reply[k]??eval(c), eval(base), res ->
          if
          :: res == OK -> outcome = OK; break
          :: else -> skip
          fi
       :: atomic { faults > 0 -> faults-- }; uncertain = true
       :: timeout -> uncertain = true
       fi
    od;

    /* ACK-COMMIT: the table's offsets after the commit (committed) or as loaded (all rejected) */
    atomic {
      if
      :: outcome == OK -> assert(landed[c])
      :: else -> skip
      fi;
      if
      :: outcome != 0 ->
         w = 0;
         do
         :: w < NW -> if :: got & (1 << w) -> postW(w, ACK, c, nx[0], nx[1]) :: else -> skip fi; w++
         :: else -> break
         od
      :: else -> skip
      fi;
      /* the round is over: what it collected matters only to a request of it still waiting */
      if
      :: !(req??[_, _, eval(c), _, _]) ->
         x = 0;
         do
         :: x < NW * REP -> rM[RX(c, 0, 0) + x] = 0; p = 0;
            do
            :: p < NP -> rS[(RX(c, 0, 0) + x) * NP + p] = 0; rE[(RX(c, 0, 0) + x) * NP + p] = 0; p++
            :: else -> break
            od;
            x++
         :: else -> break
         od
      :: else -> skip
      fi;
      w = 0; x = 0; p = 0; got = 0; acc = 0; base = 0; tries = 0; res = 0; first = 0; nx[0] = 0; nx[1] = 0;
      uncertain = false; outcome = 0
    }
  } unless {
    crashCoord[k] -> crashCoord[k] = false
  };
  goto round
}

proctype Faults() {
  byte j;
  do
  :: atomic { faults > 0 -> faults--; select(j : 0 .. NW - 1); crashW[j] = true; j = 0 }
  :: atomic { faults > 0 -> faults--; select(j : 0 .. NC - 1); crashCoord[j] = true; j = 0 }
  :: atomic { faults > 0 && !zombie -> faults--; zombie = true }
  :: atomic { rebalances > 0 -> rebalances--; select(j : 0 .. NP - 1); owner[j] = 1 - owner[j]; j = 0 }
  :: faults == 0 && rebalances == 0 -> break
  od
}

init {
  atomic {
    /* worker 0 starts with both partitions: its rotations are shared from the first record */
    owner[0] = 0; owner[1] = 0;
    run Catalog();
    run Faults();
    run Worker(0);
    run Worker(1);
    run Coord(0);
    run Coord(1)
  }
}
