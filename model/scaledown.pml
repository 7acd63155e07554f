/*
 * scaledown.pml: a Promela model of a kubectl-cassandra scale-down of one rack from
 * 3 nodes to 1, with the checkpoint as the lock (docs/model.md explains it all).
 *
 * Names follow the code: step kinds are internal/checkpoint's Step* constants with '-'
 * written '_' (decommission, verify_left, shrink_statefulset, ...); the checkpoint's
 * fields are cp_seq (Checkpoint.Seq), cp_holder (Holder.Session), cp_released
 * (Holder.ReleasedAt), cp_cur/cp_state (Steps[].State: every step before cp_cur is
 * done, as internal/engine runs them in order), and fresh[r] stands for the
 * resourceVersion run r saw last being the object's current one (checkpoint.Store.rv).
 * The step list is built by build_scale_down(), which mirrors
 * scaledown.Steps; model/steps_test.go compares the two.
 *
 * Issue 23 ("the world is the truth"): cp_op is Checkpoint.OperationID, held the operator
 * Deployment's kubectl-cassandra.io/paused-by list (bit o: operation o holds it paused),
 * cl_exists the cluster resource. A run's command is scale (again, when the checkpoint
 * is gone), resume, abort (ABORTS) or scale --force after a refusal (REPLANS, the plan
 * made again replaces the checkpoint); the environment may wipe the checkpoint (WIPES)
 * or delete the cluster resource (DELETES). This models the rules issue 23 asks for
 * (stale holders, adoption, abort's judgement from the world), which the code at the
 * time of writing does not all follow: docs/model.md says where it differs.
 *
 * Mutations (spin -D...): each must make spin report a counterexample.
 *   MUT_PVC_EARLY    delete-pvcs does not wait for the pod to be gone
 *   MUT_NO_FENCE     actions are not preceded by a proof that this session holds the lock
 *   MUT_NO_ALLUN     decommission checks only its own node, not every node of the DC
 *   MUT_SEQ          Store.Save raises seq before the write, keeps it after a conflict,
 *                    accepts a retry on seq alone (holder not compared); the lease
 *                    renewer only logs a lost write (issue 15's lock defect)
 *   MUT_PAUSE_PLAIN  pause-operator is done only when the Deployment is at 0: a resume
 *                    after the restore was written pauses the operator again
 *   MUT_NO_PAUSE     pause-operator believes the operator paused (it is not)
 *   MUT_NO_REDO      verify-left never sends a restarted (NORMAL again) node back to
 *                    decommission (liveness)
 * Issue 23 (abort, re-plans, the operator's pause holders, a world that wipes):
 *   MUT_STALE_HOLDER        stale holders are left in place: the restore and every command
 *                           remove only their own operation (the operator stays paused)
 *   MUT_ABORT_PENDING_PAUSE abort releases the pause only if the checkpoint records the
 *                           pause started: after an interrupted re-plan it clears the
 *                           checkpoint and leaves its pause behind (finding 3)
 *   MUT_ADOPT_NO_CHECK      a stale holder is removed and the operator restored while the
 *                           cluster's count differs from the StatefulSet's replicas
 *   MUT_WIPED_REFUSE        scale (again, the checkpoint wiped) refuses a half-removed node
 *                           instead of finishing it (no way forward)
 *   MUT_DECOM_NEVER_SENT_DONE  abort (and the re-plan) judge a decommission recorded
 *                           started as done without asking the ring
 */

#define NNODES 3
#define TARGET 1
#define NONE 255
#define NRUN 2

#ifndef RUNS
#define RUNS 2		/* plugin runs: scale, and a second engineer's resume */
#endif
#ifndef CRASHES
#define CRASHES 2	/* crashes of either run, in all */
#endif
#ifndef FORCES
#define FORCES 1	/* resume --force-takeover while the holder may live */
#endif
#ifndef DOWNS
#define DOWNS 1		/* a node going DN (and back) */
#endif
#ifndef RECREATES
#define RECREATES 1	/* a pod re-created (eviction): same node, Cassandra restarts */
#endif
#ifndef REFUSALS
#define REFUSALS 1	/* Cassandra refuses a decommission */
#endif
#ifndef BUMPS
#define BUMPS 1		/* someone else writes the cluster resource (status): rv changes */
#endif
#ifndef RENEWS
#define RENEWS 2	/* lease renewals (each is a checkpoint write) */
#endif
#ifndef ABORTS
#define ABORTS 0	/* abort commands (each may refuse) */
#endif
#ifndef REPLANS
#define REPLANS 0	/* scale --force after a refusal: the plan made again replaces the checkpoint */
#endif
#ifndef WIPES
#define WIPES 0		/* someone wipes the checkpoint annotation */
#endif
#ifndef DELETES
#define DELETES 0	/* someone deletes the cluster resource (no finalizer) */
#endif
/* incarnations per run: every stop (crash, refusal, lost lock, a refused abort or re-plan,
 * a wiped checkpoint) may be followed by another command */
#define NINC (CRASHES + FORCES + REFUSALS + ABORTS + REPLANS + WIPES + DELETES + 2)
#define NSESS (1 + NRUN * NINC)
/* operations (checkpoints created): the first, and a scale again after a wipe or an abort */
#define NOPS (2 + WIPES + ABORTS)

mtype = { pause_operator, decommission, verify_left, shrink_statefulset, wait_pod_gone,
          delete_pvcs, update_cluster, resume_operator };
mtype = { pending, started };			/* step states; done = before cp_cur */
mtype = { NORMAL, LEAVING, LEFT };		/* Cassandra's view of a node (netstats Mode) */
mtype = { cmd_resume, cmd_abort, cmd_replan };	/* what a run does once it took the checkpoint over */

/* the plan: step kinds and the ordinal of the pod each is about */
#define MAXSTEPS 13
mtype kind[MAXSTEPS];
byte spod[MAXSTEPS];
byte nsteps;

/* the checkpoint annotation on the cluster resource */
bool cp_present;
byte cp_seq;
byte cp_holder;		/* Holder.Session */
bool cp_released;	/* Holder.ReleasedAt set */
byte cp_cur;		/* first step not recorded done */
mtype cp_state;		/* that step's state */
byte cp_op;		/* OperationID */
bool planned;		/* scale wrote the checkpoint (a crash before: run scale again) */
bool finished;		/* the checkpoint was cleared at the end of the scale-down (Store.Finish) */
bool fresh[NRUN];	/* run r's last seen resourceVersion is current */
bool cl_exists = 1;	/* the cluster resource exists (the checkpoint is an annotation on it) */
byte nextop;		/* the next operation's ID */
bool refused_ever;	/* Cassandra refused a decommission: scale --force may follow */

/* the world */
bool pod[NNODES];		/* pod exists */
bool pvc[NNODES];		/* its data PVC exists */
mtype mode[NNODES];		/* NORMAL, LEAVING, LEFT (DECOMMISSIONED, out of the ring) */
bool up[NNODES];		/* U or D in nodetool status */
byte sts = NNODES;		/* the rack StatefulSet's spec.replicas */
byte crn = NNODES;		/* the cluster resource's nodesPerRacks */
byte opr = 1;			/* the operator Deployment's replicas */
byte held;			/* its kubectl-cassandra.io/paused-by list: bit o = operation o */
bool orestored[NOPS];		/* operation o's restore step restored the operator */

/* sessions: 1 + r + NRUN*k for incarnation k of run r */
bool alive[NSESS];	/* the session's process runs (and renews its lease) */
bool deposed[NSESS];	/* another session took the checkpoint over from it */

/* budgets of the environment's events */
byte crashes = CRASHES;
byte forces = FORCES;
byte downs = DOWNS;
byte recreates = RECREATES;
byte refusals = REFUSALS;
byte bumps = BUMPS;
byte renews = RENEWS;
byte aborts = ABORTS;
byte replans = REPLANS;
byte wipes = WIPES;
byte deletes = DELETES;
bool creq[NRUN];	/* a crash of run r is due */

inline add(k, p) {
	kind[nsteps] = k; spod[nsteps] = p; nsteps++
}

/* scaledown.Steps(nodes, pause): nodes highest ordinal first */
inline build_scale_down() {
#ifndef NOPAUSESTEP
	add(pause_operator, NONE);
#endif
	b = NNODES - 1;
	do
	:: b >= TARGET ->
		add(decommission, b); add(verify_left, b); add(shrink_statefulset, b);
		add(wait_pod_gone, b); add(delete_pvcs, b);
		b--
	:: else -> break
	od;
#ifndef NOPAUSESTEP
	add(update_cluster, NONE);
	add(resume_operator, NONE)
#else
	add(update_cluster, NONE)
#endif
}

/* the operator's pause holders. A holder is stale when its operation has no live
 * checkpoint (wiped, the cluster resource deleted, another operation's checkpoint there):
 * only the operation of the checkpoint standing on the cluster is live. */
#define BIT(o) (1 << (o))
#define HELD(o) ((held & BIT(o)) != 0)
#define LIVEMASK ((cl_exists && cp_present) -> BIT(cp_op) : 0)
/* the cluster resource asks for what the StatefulSet has (a deleted one asks nothing) */
#define AGREE (!cl_exists || crn == sts)
/* KEEP: the holders a command keeps when it meets the list. Stale ones go, but only when
 * their cluster agrees: else the operator, restored, would change the StatefulSet. */
#if defined(MUT_STALE_HOLDER)
#define KEEP 255
#elif defined(MUT_ADOPT_NO_CHECK)
#define KEEP LIVEMASK
#else
#define KEEP (AGREE -> LIVEMASK : 255)
#endif
/* ADOPT: what a pause keeps: a new operation on the cluster takes a stale pause over */
#ifdef MUT_STALE_HOLDER
#define ADOPT 255
#else
#define ADOPT LIVEMASK
#endif
/* the holders that keep the operator paused once an operation left (restore's Done) */
#ifdef MUT_STALE_HOLDER
#define STILL_HELD (held != 0)
#else
#define STILL_HELD ((held & LIVEMASK) != 0)
#endif

/* any command meets the holder list: stale holders removed (KEEP), and the operator
 * restored when the last one left */
inline meet_holders() {
	h = held; held = held & KEEP;
	if
	:: h != held && held == 0 -> opr = 1
	:: else -> skip
	fi;
	h = 0
}

/* RestoreOperator (the restore step, abort): leave the list, meet the stale holders,
 * restore the operator when no holder is left */
inline unpause(o) {
	h = held; held = held & ~BIT(o) & KEEP;
	if
	:: h != held && held == 0 -> opr = 1
	:: else -> skip
	fi;
	h = 0
}

/* every node of the DC in the ring is UN */
#define UN(n) (mode[n] == LEFT || (mode[n] == NORMAL && up[n] && pod[n]))
#define ALLUN (UN(0) && UN(1) && UN(2))

/* Done: asked of the world (steps.*.Done) */
#ifdef MUT_PAUSE_PLAIN
#define PAUSE_DONE (opr == 0 && HELD(myop))
#else
/* pauseOnce: paused now with this operation a holder, or the restore after it was
 * written started or done */
#define PAUSE_DONE ((opr == 0 && HELD(myop)) || (cp_cur == nsteps - 1 && cp_state == started))
#endif
#ifdef MUT_NO_PAUSE
#undef PAUSE_DONE
#define PAUSE_DONE (1)
#endif
#ifdef MUT_PVC_EARLY
#define PODGONE_DONE(n) (1)
#else
#define PODGONE_DONE(n) (!pod[n])
#endif
#define DONE(i, n) ( \
	(kind[i] == pause_operator && PAUSE_DONE) || \
	(kind[i] == decommission && mode[n] != NORMAL) || \
	(kind[i] == verify_left && mode[n] == LEFT) || \
	(kind[i] == shrink_statefulset && sts <= n) || \
	(kind[i] == wait_pod_gone && PODGONE_DONE(n)) || \
	(kind[i] == delete_pvcs && !pvc[n]) || \
	(kind[i] == update_cluster && crn == TARGET && sts == TARGET) || \
	(kind[i] == resume_operator && !HELD(myop) && (opr == 1 || STILL_HELD)))

/* Safe: re-checked from the world right before acting */
#ifdef MUT_NO_ALLUN
#define DECOMM_SAFE(n) (pod[n] && mode[n] == NORMAL && up[n])
#else
#define DECOMM_SAFE(n) (pod[n] && mode[n] == NORMAL && up[n] && ALLUN)
#endif
#ifdef MUT_PVC_EARLY
#define PVC_SAFE(n) (mode[n] == LEFT)
#else
#define PVC_SAFE(n) (!pod[n] && mode[n] == LEFT && sts <= n)
#endif
#define SAFE(i, n) ( \
	(kind[i] == pause_operator) || \
	(kind[i] == decommission && DECOMM_SAFE(n)) || \
	(kind[i] == shrink_statefulset && mode[n] == LEFT && sts == n + 1) || \
	(kind[i] == delete_pvcs && PVC_SAFE(n)) || \
	(kind[i] == update_cluster && sts == TARGET) || \
	(kind[i] == resume_operator && crn == TARGET && sts == TARGET))

/* steps that write nothing before they act (engine.Evident) */
#define EVIDENT(i) (kind[i] != pause_operator && kind[i] != decommission && kind[i] != resume_operator)
/* steps whose Do does nothing */
#define NOACTION(i) (kind[i] == verify_left || kind[i] == wait_pod_gone)

/* the proof, right before an action, that this session still holds the lock */
#ifdef MUT_NO_FENCE
#define FENCE (1)
#else
#define FENCE (cp_present && cp_holder == sess && cp_op == myop && cp_seq == myseq)
#endif

/* on a 409 conflict, Store.write re-reads and retries only if the checkpoint is still ours */
#ifdef MUT_SEQ
#define ACCEPT (cp_present && cp_seq == myseq - 1)
#else
#define ACCEPT (cp_present && cp_seq == myseq && cp_holder == sess)
#endif

/* Store.Finish writes at the seq the run wrote last (no increment) */
#ifdef MUT_SEQ
#define FINISH_ACCEPT (cp_present && cp_seq == myseq)
#else
#define FINISH_ACCEPT ACCEPT
#endif

/* one conditional write of the run's checkpoint (Store.Save) */
inline write_cp() {
	/* a plain write never changes the holder: only a takeover does */
	assert(cp_holder == sess && !deposed[sess]);
	cp_seq = myseq; cp_cur = i; cp_state = mst; cp_released = rel;
	fresh[1 - r] = 0; fresh[r] = 1
}

/* Store.Save: lost = 1 when the checkpoint is no longer ours */
inline save() {
	lost = 0;
#ifdef MUT_SEQ
	myseq++;		/* raised before the write, kept when it fails */
#endif
	do
	:: atomic { fresh[r] ->
#ifndef MUT_SEQ
		myseq++;
#endif
		write_cp() }; break
	:: atomic { !fresh[r] ->	/* 409: re-read */
		if
		:: ACCEPT -> fresh[r] = 1
		:: else -> lost = 1
		fi };
		if
		:: lost -> break
		:: else -> skip
		fi
	od
}

/* fencing: an action by the session holding this operation's checkpoint, never deposed */
#define FENCED (cp_present && cp_holder == sess && cp_op == myop && !deposed[sess])

/* an action: what it may do, and the properties that must hold when it does */
inline act(i, n) {
	assert(FENCED);
	if
	:: kind[i] == pause_operator ->
		/* history 1 -> 0 -> 1: an operation never pauses after its restore step (abort's
		 * restore, crashed before the checkpoint was cleared, may be followed by resume) */
		assert(!orestored[myop]);
		opr = 0; held = (held & ADOPT) | BIT(myop)	/* join, or adopt a stale pause */
	:: kind[i] == resume_operator ->
		assert(!orestored[myop]); orestored[myop] = 1;
		unpause(myop)
	:: kind[i] == decommission ->
		assert(ALLUN);	/* every node of the DC UN, now */
		if
		:: refusals > 0 -> refusals--; refused = 1; refused_ever = 1	/* RF check: still NORMAL */
		:: true -> mode[n] = LEAVING
		fi
	:: kind[i] == shrink_statefulset ->
		assert(mode[n] == LEFT);	/* never a pod removed while its node is in the ring */
		sts = n		/* JSON patch: test n+1, replace n */
	:: kind[i] == delete_pvcs ->
		assert(!pod[n] && mode[n] == LEFT);	/* never a PVC of a pod or a ring member */
		pvc[n] = 0
	:: kind[i] == update_cluster -> crn = TARGET; fresh[0] = 0; fresh[1] = 0
	fi
}

/* abort's and the re-plan's judgement of a planned node (scaledown.assess), asked of the
 * world: NORMAL but not UN (refuse: try again once it is seen); LEAVING (the re-plan
 * refuses; abort waits until it left, then finishes it); out of the ring (LEFT) and
 * removed in full, or half-removed (pod, StatefulSet or PVC still there: abort finishes
 * it); or else untouched (NORMAL and UN), a decommission recorded started but never sent
 * included. */
#ifndef NOPAUSESTEP
#define FIRSTNODE 1
#else
#define FIRSTNODE 0
#endif
/* the index of node n's decommission step, and whether the checkpoint records it started */
#define DECIDX(n) (FIRSTNODE + 5 * (NNODES - 1 - (n)))
#define DEC_RECORDED(n) (cp_cur > DECIDX(n) || (cp_cur == DECIDX(n) && cp_state == started))
#ifdef MUT_DECOM_NEVER_SENT_DONE
/* a decommission recorded started is taken as done: the ring is not asked */
#define J_LEFT(n) (DEC_RECORDED(n) || mode[n] == LEFT)
#define J_LEAVING(n) (!DEC_RECORDED(n) && mode[n] == LEAVING)
#else
#define J_LEFT(n) (mode[n] == LEFT)
#define J_LEAVING(n) (mode[n] == LEAVING)
#endif
#define J_REMOVED(n) (J_LEFT(n) && !pod[n] && sts <= n && !pvc[n])
#define J_HALF(n) (J_LEFT(n) && !J_REMOVED(n))
#define J_UNTOUCHED(n) (!J_LEFT(n) && !J_LEAVING(n))
/* NORMAL but not seen UN: whether it is leaving is unknown */
#define J_NOT_UN(n) (!J_LEFT(n) && mode[n] == NORMAL && !(up[n] && pod[n]))
/* abort and the re-plan refuse (nothing changed, the lock released) */
#define J_REFUSE (J_LEAVING(1) || J_LEAVING(2) || J_NOT_UN(1) || J_NOT_UN(2))
/* abort refuses only a node whose state is unknown; a LEAVING one it waits for */
#define J_NOT_UN_ANY (J_NOT_UN(1) || J_NOT_UN(2))
#define J_HALF_ANY (J_HALF(1) || J_HALF(2))
/* abort releases the pause: correct, whenever the world shows this operation a holder
 * (unpause does nothing otherwise); the mutant, only when the checkpoint records the
 * pause started, which a re-plan reset */
#define PAUSE_RECORDED (cp_cur > 0 || cp_state == started)
/* scale (again) on a cluster without a checkpoint: a plan from the world, which finishes a
 * half-removed node (its decommission step is done: it is out of the ring) */
#ifdef MUT_WIPED_REFUSE
#define PLAN_REFUSED ((mode[1] == LEFT && (pod[1] || sts > 1 || pvc[1])) || \
	(mode[2] == LEFT && (pod[2] || sts > 2 || pvc[2])))
#else
#define PLAN_REFUSED (0)
#endif

/* where it all ends: no checkpoint, the cluster resource agrees with the StatefulSet, the
 * operator runs and nobody holds it paused */
#define GOAL (planned && !cp_present && AGREE && opr == 1 && held == 0)

proctype Run(byte r) {
	byte sess, k, myseq, i, n, h, myop;
	mtype mst, cmd;
	bool ok, lost, rel, refused, forced;

	do
	:: k < NINC && !GOAL ->
		sess = 1 + r + NRUN * k; k++;
		alive[sess] = 1;
		i = 0; mst = pending; rel = 0; refused = 0; forced = 0; cmd = cmd_resume;
		{
			/* every command reads the operator's holder list first and meets its stale holders */
			atomic { meet_holders() };
			if
			:: atomic { GOAL || !cl_exists -> skip }; goto stop	/* nothing (left) to do */
			:: atomic { cl_exists && !cp_present && !GOAL && (r == 0 || planned) && nextop < NOPS ->
				/* scale (again, after a wipe): plan from the world, then Store.Create */
				if
				:: PLAN_REFUSED -> goto stop
				:: else -> skip
				fi;
				myop = nextop; nextop++; planned = 1;
				cp_present = 1; cp_op = myop; cp_seq = 1; myseq = 1; cp_holder = sess;
				cp_released = 0; cp_cur = 0; cp_state = pending;
				fresh[1 - r] = 0; fresh[r] = 1 }
			:: atomic { cp_present && (cp_released || !alive[cp_holder] || forces > 0) ->
				/* resume, abort or scale --force: load, judge the lock, take over (Lock,
				 * TakeOver, Save) in one step: a takeover written at a stale
				 * resourceVersion fails and the run loads again, so nothing is lost */
				if
				:: cp_released || !alive[cp_holder] -> skip	/* released, or lease expired */
				:: forces > 0 -> forces--	/* --force-takeover, the holder may live */
				fi;
				deposed[cp_holder] = 1; cp_holder = sess;
				cp_seq++; myseq = cp_seq; cp_released = 0; myop = cp_op;
				fresh[1 - r] = 0; fresh[r] = 1;
				if
				:: skip		/* resume */
				:: aborts > 0 -> aborts--; cmd = cmd_abort; i = cp_cur; mst = cp_state
				:: replans > 0 && refused_ever -> replans--; cmd = cmd_replan; i = cp_cur; mst = cp_state
				fi }
			fi;

			if
			:: cmd == cmd_abort -> goto do_abort
			:: cmd == cmd_replan ->
				/* scale --force (internal/cli/replan.go): no node half way; the plan made
				 * again from the world (every step pending) replaces the checkpoint */
				if
				:: atomic { !FENCE -> lost = 1 }; goto stop
				:: atomic { FENCE && (J_REFUSE || J_HALF_ANY) -> rel = 1 };
					save(); goto stop	/* refused: the old plan kept, the lock released */
				:: atomic { FENCE && !J_REFUSE && !J_HALF_ANY && (J_UNTOUCHED(1) || J_UNTOUCHED(2)) ->
					i = 0; mst = pending };
					save();		/* the new plan: the process may crash right after */
					if
					:: lost -> goto stop
					:: else -> skip
					fi
				:: atomic { FENCE && J_REMOVED(1) && J_REMOVED(2) ->
					i = 0; mst = pending }	/* nothing to decommission: resume the old plan */
				fi
			:: else -> skip
			fi;

			/* engine.Run: every step from the first, the world asked whether it is done */
			do
			:: i == nsteps -> break
			:: else ->
				n = spod[i];
				if
				:: atomic { !forced && DONE(i, n) -> i++; mst = pending }	/* markDone: in memory */
				:: else ->
					forced = 0;
					if
					:: !EVIDENT(i) ->	/* "started" is written before the action */
						mst = started; save();
						if
						:: lost -> goto stop
						:: else -> skip
						fi
					:: else -> skip
					fi;
					if
					:: NOACTION(i) -> skip
					:: else ->
						/* Safe, the lock, the action: one step; wait while not safe */
						do
						:: atomic { SAFE(i, n) && FENCE -> act(i, n) }; break
						:: atomic { !FENCE -> lost = 1 }; goto stop
						:: atomic { renews > 0 -> renews-- }; save();
#ifndef MUT_SEQ
							if
							:: lost -> goto stop
							:: else -> skip
							fi
#endif
						od;
						if
						:: refused ->	/* exit 3: recorded not started, the lock released */
							mst = pending; rel = 1; save(); goto stop
						:: else -> skip
						fi
					fi;
					/* wait until the world shows the effect */
					do
					:: atomic { DONE(i, n) -> i++; mst = pending }; break
					:: atomic { kind[i] == decommission && mode[n] == NORMAL ->
						forced = 1 }; break	/* still NORMAL: decommission again */
#ifndef MUT_NO_REDO
					:: atomic { kind[i] == verify_left && mode[n] == NORMAL ->
						i--; forced = 1 }; break	/* restarted: back to decommission */
#endif
					:: atomic { kind[i] == wait_pod_gone && pod[n] && sts > n ->
						rel = 1 }; save(); goto stop	/* grown again: fatal */
#ifndef MUT_SEQ
					/* the lease renewer finds the checkpoint no longer ours (taken over,
					 * wiped): the run stops (the wait also ends at StepTimeout) */
					:: atomic { !FENCE -> lost = 1 }; goto stop
#endif
					:: atomic { renews > 0 -> renews-- }; save();
#ifndef MUT_SEQ
						if
						:: lost -> goto stop
						:: else -> skip
						fi
#endif
					od
				fi
			od;
			goto finish;

			/* abort (internal/cli/abort.go): at a safe point, judged from the world with
			 * the checkpoint ours; Safe, the lock and each write in one step */
do_abort:
			do
			:: atomic { !FENCE -> lost = 1 }; goto stop
			:: atomic { FENCE && J_NOT_UN_ANY -> rel = 1 };
				save(); goto stop	/* a node not seen UN: refused, the lock released */
			/* a node LEAVING: abort waits until it left (or stopped leaving: then it is
			 * untouched, and abort never sends a decommission), then finishes it */
			/* a half-removed node is finished first: shrink, the pod gone, its PVC */
			:: atomic { FENCE && J_HALF(2) && sts == 3 ->
				assert(FENCED); assert(mode[2] == LEFT); sts = 2 }
			:: atomic { FENCE && J_HALF(2) && !pod[2] && sts <= 2 && pvc[2] ->
				assert(FENCED); assert(mode[2] == LEFT); pvc[2] = 0 }
			:: atomic { FENCE && J_HALF(1) && sts == 2 ->
				assert(FENCED); assert(mode[1] == LEFT); sts = 1 }
			:: atomic { FENCE && J_HALF(1) && !pod[1] && sts <= 1 && pvc[1] ->
				assert(FENCED); assert(mode[1] == LEFT); pvc[1] = 0 }
			/* every node untouched or removed in full: the count := the StatefulSet's */
			:: atomic { FENCE && !J_REFUSE && !J_HALF_ANY ->
				assert(FENCED);
				if
				:: crn != sts -> crn = sts; fresh[0] = 0; fresh[1] = 0
				:: else -> skip
				fi }; break
			od;
			/* restore the operator: leave the holder list */
			if
			:: atomic { !FENCE -> lost = 1 }; goto stop
			:: atomic { FENCE ->
				assert(FENCED);
#ifdef MUT_ABORT_PENDING_PAUSE
				if
				:: PAUSE_RECORDED -> unpause(myop)
				:: else -> skip
				fi
#else
				unpause(myop)
#endif
				}
			fi;

			/* Store.Finish: clear the checkpoint, at the seq this run wrote last */
finish:
			do
			:: atomic { fresh[r] ->
				assert(cp_holder == sess && cp_op == myop && !deposed[sess]);
				/* no pause of its own left behind; the operator runs unless held */
				assert(!HELD(myop) && (opr == 1 || held != 0));
				if
				:: cmd == cmd_abort -> assert(AGREE)
				:: else ->
					assert(crn == TARGET && sts == TARGET);
					assert(!pvc[1] && !pvc[2] && mode[1] == LEFT && mode[2] == LEFT);
					finished = 1
				fi;
				cp_present = 0; fresh[0] = 0; fresh[1] = 0 }; break
			:: atomic { !fresh[r] ->
				if
				:: FINISH_ACCEPT -> fresh[r] = 1
				:: else -> lost = 1
				fi };
				if
				:: lost -> goto stop
				:: else -> skip
				fi
			od;
stop:			skip
		} unless { atomic { creq[r] -> creq[r] = 0 } };
		atomic { alive[sess] = 0; i = 0; myseq = 0; n = 0; h = 0; mst = pending; myop = 0;
			cmd = cmd_resume; ok = 0; lost = 0; rel = 0; refused = 0; forced = 0 }
	:: else -> break
	od
}

/* crashes at any point of either run */
active proctype Crasher() {
end:	do
	:: atomic { crashes > 0 -> crashes--; creq[0] = 1 }
	:: atomic { crashes > 0 -> crashes--; creq[1] = 1 }
	od
}

/* CassKop: regrows the StatefulSet to the cluster resource's count when it runs */
active proctype Operator() {
end:	do
	:: atomic { opr > 0 && cl_exists && sts < crn -> sts++ }
	od
}

/* the StatefulSet controller: removes pods beyond replicas, highest first; creates missing ones */
active proctype StatefulSetController() {
	byte n;
end:	do
	:: atomic { pod[2] && sts <= 2 -> pod[2] = 0 }
	:: atomic { pod[1] && !pod[2] && sts <= 1 -> pod[1] = 0 }
	:: atomic { (!pod[1] && sts > 1) || (!pod[2] && sts > 2) ->
		if
		:: !pod[1] && sts > 1 -> n = 1
		:: else -> n = 2
		fi;
		pod[n] = 1;
		if
		:: !pvc[n] -> pvc[n] = 1; mode[n] = NORMAL; up[n] = 1	/* a new, empty node */
		:: else -> skip		/* same node: a decommissioned one stays out */
		fi;
		n = 0 }
	od
}

/* Cassandra: a LEAVING node finishes streaming and leaves the ring */
active proctype Cassandra() {
end:	do
	:: atomic { mode[1] == LEAVING -> mode[1] = LEFT }
	:: atomic { mode[2] == LEAVING -> mode[2] = LEFT }
	od
}

/* the environment: a node DN and back, a pod re-created, a write to the cluster resource,
 * the checkpoint wiped, the cluster resource deleted */
active proctype Environment() {
end:	do
	:: atomic { downs > 0 && mode[0] == NORMAL && up[0] -> downs--; up[0] = 0 }
	:: atomic { downs > 0 && mode[1] == NORMAL && up[1] && pod[1] -> downs--; up[1] = 0 }
	:: atomic { downs > 0 && mode[2] == NORMAL && up[2] && pod[2] -> downs--; up[2] = 0 }
	:: atomic { !up[0] -> up[0] = 1 }
	:: atomic { !up[1] -> up[1] = 1 }
	:: atomic { !up[2] -> up[2] = 1 }
	/* a pod re-created (same node identity): Cassandra restarts, which ends a decommission */
	:: atomic { recreates > 0 && mode[1] == LEAVING -> recreates--; mode[1] = NORMAL }
	:: atomic { recreates > 0 && mode[2] == LEAVING -> recreates--; mode[2] = NORMAL }
	:: atomic { bumps > 0 -> bumps--; fresh[0] = 0; fresh[1] = 0 }
	/* the checkpoint annotation wiped; the cluster resource deleted (no finalizer) */
	:: atomic { wipes > 0 && cp_present -> wipes--; cp_present = 0; fresh[0] = 0; fresh[1] = 0 }
	:: atomic { deletes > 0 && cp_present -> deletes--; cl_exists = 0; cp_present = 0;
		fresh[0] = 0; fresh[1] = 0 }
	od
}

/* invariants, checked in every reachable state (a branch fires only when one breaks) */
#define TWO_LEAVING (mode[1] == LEAVING && mode[2] == LEAVING)
#define OPERATOR_LIVE_WHILE_DIFFERENT (opr > 0 && !AGREE)
#define PAUSED_UNHELD (opr == 0 && held == 0)
active proctype Monitor() {
end:	do
	:: atomic { TWO_LEAVING -> assert(!TWO_LEAVING) }			/* never two LEAVING */
	:: atomic { OPERATOR_LIVE_WHILE_DIFFERENT -> assert(!OPERATOR_LIVE_WHILE_DIFFERENT) }
	:: atomic { PAUSED_UNHELD -> assert(!PAUSED_UNHELD) }	/* paused: someone holds it */
	od
}

init {
	byte j, b;
	atomic {
		j = 0;
		do
		:: j < NNODES -> pod[j] = 1; pvc[j] = 1; mode[j] = NORMAL; up[j] = 1; j++
		:: else -> break
		od;
		build_scale_down();
#ifdef PRINT_STEPS
		j = 0;
		do
		:: j < nsteps ->
			if
			:: spod[j] == NONE -> printf("MODEL-STEP %e -\n", kind[j])
			:: else -> printf("MODEL-STEP %e %d\n", kind[j], spod[j])
			fi;
			j++
		:: else -> break
		od
#else
		run Run(0);
#if RUNS > 1
		run Run(1)
#endif
#endif
	}
}

ltl finishes { <> finished }		/* the scale-down completes */
ltl recovers { <> GOAL }		/* the cluster ends consistent, the operator running */
