/*
 * driven.pml: a Promela model of the DELEGATED mode (cass-operator): the operator is
 * never paused; the plugin asks it for one thing at a time and verifies every step in the
 * world (docs/model.md, "The driven model", explains it all).
 *
 * Two operations, one per verifier (spin -DOP_SCALE for the scale-down, the replace
 * otherwise):
 *   replace (replacenode task): set-throughput, create-replace-task (a replacenode
 *     CassandraTask labelled with the operation's ID), wait-replaced, wait-replace-task,
 *     restore-throughput (model/steps_test.go compares the task's steps with the code's)
 *     (internal/operation/replacenode/{task,wait}.go, internal/steps/throughput*.go);
 *   scale-down 4 -> 1 (driven: the datacenter's size written one node down at a time):
 *     for nodes 3, 2, 1: set-throughput, request-removal, wait-leaving, verify-left,
 *     restore-throughput, wait-pod-gone, wait-claims-gone, wait-released
 *     (internal/operation/scaledown/{driven,steps}.go, internal/steps/driven.go).
 *
 * One plugin run: every stop (a crash at any statement, a refusal, the record wiped) is
 * followed by the next command of the user, who follows the last command's advice
 * (resume, abort, repair-operator-state, the same command again); after a crash the user
 * may resume or abort (ABORTS). Once the user asked for abort, they keep aborting unless
 * told otherwise. The lock (two runs, takeovers) is scaledown.pml's subject: here the
 * checkpoint is the lock only in that a run stops once the record is no longer its own.
 *
 * This models the rules as they should be (issue 33; the review of 2026-12-06, findings
 * 1, 4, 5, 8, 10): a delegated request is watched until the operator acts and withdrawn
 * while not started when what made it safe no longer holds; abort may withdraw a request
 * not started; done is read from the world; marks (the task, the stream limit) carry
 * their operation's ID and are reaped by any later command once their operation is gone;
 * the operator is never paused. docs/model.md says where the code differs.
 *
 * Mutations (spin -D...): each must make spin report a counterexample.
 *   MUT_NO_WATCH          wait-replaced does not watch the node while the task is not
 *                         started (finding 1): the operator replaces a live node
 *   MUT_ABORT_TASK_REFUSE abort refuses as soon as the task exists, started or not, and
 *                         sends the user to resume (finding 1)
 *   MUT_FAILED_UNREAD     wait-replaced does not read the task: a failed task is waited
 *                         on for ever, abort refuses (finding 4)
 *   MUT_DONE_FROM_RECORD  create-task is done only if its task exists or the record says
 *                         so: a task finished and deleted (TTL) before a resume is asked
 *                         again (finding 10)
 *   MUT_END_KEEPS_TASK    the end leaves the operation's finished task in the world
 *   MUT_NO_REAP           a later command does not reap the marks of an operation gone
 *                         (its stream limit stays set for good)
 *   MUT_PAUSE             the request is made with the operator paused (the CassKop way)
 *   MUT_ABORT_RECORDED    abort trusts recorded step states: a node removed in full whose
 *                         steps are not recorded done makes it refuse, sending the user to
 *                         resume, which decommissions a kept node (finding 8)
 *   MUT_CARRY_REFUSE      repair-operator-state cannot carry a scale with a stream limit
 *                         set (finding 5): no way forward
 */

#define NONE 255
#define B(o) (1 << (o))

#ifndef CRASHES
#define CRASHES 1
#endif
#ifndef ABORTS
#define ABORTS 1	/* the user chooses abort after a crash */
#endif
#ifndef WIPES
#define WIPES 0		/* the checkpoint annotation wiped */
#endif
#ifndef DOWNS
#define DOWNS 1		/* the operator down (restarted) for a while */
#endif
#ifndef BACKS
#define BACKS 1		/* replace: the dead node comes back (UN) */
#endif
#ifndef FAILS
#define FAILS 1		/* replace: the operator's task fails (claims deleted, pod kept) */
#endif
#ifndef TTLS
#define TTLS 1		/* replace: a finished task deleted after its TTL */
#endif
#ifndef STUCKS
#define STUCKS 1	/* scale: the operator killed at its decommission call (FACTS §8 A) */
#endif
#ifndef RENEWS
#define RENEWS 1	/* record writes of done marks (lease renewals) */
#endif

#define NINC (2 * (CRASHES + ABORTS + WIPES + BACKS + FAILS + TTLS + STUCKS) + 4)

mtype = { set_throughput, create_replace_task, wait_replaced, wait_replace_task, restore_throughput,
          request_removal, wait_leaving, verify_left, wait_pod_gone, wait_claims_gone,
          wait_released };
mtype = { NORMAL, LEAVING, LEFT };			/* a node in the ring */
mtype = { T_NONE, T_PENDING, T_RUNNING, T_DONE, T_FAILED };	/* the task */
mtype = { ADV_ANY, ADV_RESUME, ADV_ABORT, ADV_REPAIR };	/* what a stop says to run next */
mtype = { C_NONE, C_PLAN, C_RESUME, C_ABORT, C_REPAIR };

#ifdef OP_SCALE
#define NN 4
#define TARGET 1
#define PERNODE 8
#define MAXSTEPS 24
#else
#define MAXSTEPS 5
#endif
mtype kind[MAXSTEPS];
byte spod[MAXSTEPS];
byte nsteps;

/* the checkpoint annotation (the lock and the log of intent) */
bool cp_present;
byte cp_op;		/* OperationID */
byte cp_cur;		/* steps before cp_cur recorded done (evident steps' marks reach it by a renewal only) */
bool planned;		/* a first operation was planned */
byte nextop = 1;

/* marks in the world, each with its operation's ID */
byte lim;		/* stream limits set: bit o = operation o's */
bool paused;		/* the operator paused (never, in the design) */

/* the operator */
bool opr_up = 1;

/* the user */
mtype advice = ADV_ANY;
bool abort_asked;

#ifdef OP_SCALE
byte size = NN;			/* CassandraDatacenter spec.size */
byte sts = NN;			/* the rack StatefulSet's replicas */
mtype mode[NN];
bool pod[NN];
bool pvc[NN];
bool entry[NN];			/* status.nodeStatuses[pod] */
byte removing = NONE;		/* the node the operator is removing (ScalingDown) */
bool stuck;			/* FACTS §8 A: the operator never returns to its scale-down */
byte stucks = STUCKS;
#define REMOVED(k) (!pod[k] && !pvc[k] && !entry[k])
#define GOAL (planned && !cp_present && lim == 0 && !paused && !stuck && removing == NONE)
#else
bool back;			/* the dead node came back: UN */
mtype tk = T_NONE;		/* the replacenode task (one name per operation; one at a time) */
byte tk_op;			/* its label: the operation's ID */
bool claims = 1;		/* the dead node's claims */
bool oldpod = 1;		/* the dead node's pod (its planned UID) */
bool replaced;			/* the new pod's node UN with the dead node's tokens (verified) */
bool chance;			/* ghost: a plugin command read the world while a pending task's node was UN, and left the task */
byte backs = BACKS;
byte fails = FAILS;
byte ttls = TTLS;
#define GOAL (planned && !cp_present && lim == 0 && !paused && tk == T_NONE)
#endif

byte crashes = CRASHES;
byte aborts = ABORTS;
byte wipes = WIPES;
byte downs = DOWNS;
byte renews = RENEWS;
bool creq;			/* a crash of the run is due */

#define LOCKED (cp_present && cp_op == myop)

inline build() {
#ifdef OP_SCALE
	j = NN - 1;
	do
	:: true ->
		kind[nsteps] = set_throughput; spod[nsteps] = j; nsteps++;
		kind[nsteps] = request_removal; spod[nsteps] = j; nsteps++;
		kind[nsteps] = wait_leaving; spod[nsteps] = j; nsteps++;
		kind[nsteps] = verify_left; spod[nsteps] = j; nsteps++;
		kind[nsteps] = restore_throughput; spod[nsteps] = j; nsteps++;
		kind[nsteps] = wait_pod_gone; spod[nsteps] = j; nsteps++;
		kind[nsteps] = wait_claims_gone; spod[nsteps] = j; nsteps++;
		kind[nsteps] = wait_released; spod[nsteps] = j; nsteps++;
		if
		:: j == TARGET -> break
		:: else -> j--
		fi
	od
#else
	kind[0] = set_throughput; kind[1] = create_replace_task; kind[2] = wait_replaced;
	kind[3] = wait_replace_task; kind[4] = restore_throughput; nsteps = 5;
	j = 0;
	do
	:: j < nsteps -> spod[j] = 1; j++
	:: else -> break
	od
#endif
}

/* a lease renewal writes the in-memory done marks (bounded) */
inline renew() {
	if
	:: renews > 0 -> renews--; cp_cur = i + 1
	:: true -> skip
	fi
}

/* every command first meets the marks in the world: those of an operation that has no
 * live checkpoint are stale and reaped (a stream limit put back, a task not started
 * withdrawn, a finished task deleted); a stale task the operator runs is waited for */
inline meet() {
	skip;
#ifndef MUT_NO_REAP
	if
	:: cp_present -> lim = lim & B(cp_op)
	:: else -> lim = 0
	fi;
#endif
#ifndef OP_SCALE
	if
	:: tk != T_NONE && !(cp_present && tk_op == cp_op) ->
		if
#ifndef MUT_NO_REAP
		:: tk == T_PENDING || tk == T_DONE || tk == T_FAILED -> tk = T_NONE
#endif
		:: else -> skip
		fi
	:: else -> skip
	fi
#endif
}

#ifdef OP_SCALE
#define STALE_RUNNING (!cp_present && removing != NONE && !stuck)	/* the operator removes a node: wait for it */
#define AT_GOAL_WORLD (sts == TARGET && removing == NONE)
#else
#define STALE_RUNNING (tk == T_RUNNING && !(cp_present && tk_op == cp_op))	/* the operator runs a task of an operation gone */
#define AT_GOAL_WORLD (!oldpod || back)	/* replaced or being replaced, or live: nothing to replace */
#endif


/* the end (Store.Finish): nothing of the operation is left in the world */
inline finish() {
	atomic {
		if
		:: LOCKED ->
#ifndef OP_SCALE
#ifndef MUT_END_KEEPS_TASK
			if
			:: tk != T_NONE && tk_op == myop -> assert(tk == T_DONE || tk == T_FAILED); tk = T_NONE
			:: else -> skip
			fi;
#endif
			assert(!(tk != T_NONE && tk_op == myop));
#endif
			assert(!(lim & B(myop)) && !paused);
			cp_present = 0
		:: else -> skip
		fi
	}
}

/* the engine: every step from the first, Done asked of the world, the action guarded by
 * Safe and the lock in one step, the wait for its effect */
inline run_steps() {
	do
	:: !stop && i < nsteps -> step(); i++
	:: !stop && i >= nsteps -> finish(); break
	:: stop -> break
	od
}

inline step() {
	k = spod[i];
	if
	:: kind[i] == set_throughput ->
		atomic { if
			:: !LOCKED -> stop = 1
			:: else -> lim = lim | B(myop); renew()
			fi }
	:: kind[i] == restore_throughput ->
		atomic { if
			:: !LOCKED -> stop = 1
			:: else -> lim = lim & ~B(myop); renew()
			fi }
#ifdef OP_SCALE
	:: kind[i] == request_removal ->
		atomic { if
			:: !LOCKED -> stop = 1
			:: LOCKED && size <= k -> renew()	/* Done: the size asks for it already */
			:: LOCKED && size > k && stuck -> stop = 1; advice = ADV_REPAIR
			:: LOCKED && size > k && !stuck && opr_up && removing == NONE && sts == k + 1 && size == k + 1 ->
				assert(!abort_asked);	/* no node the user keeps is asked for */
#ifdef MUT_PAUSE
				paused = 1;
#endif
				size = k; renew()
			fi }
#ifdef MUT_PAUSE
		atomic { paused = 0 }
#endif
	:: kind[i] == wait_leaving ->
		atomic { if
			:: !LOCKED -> stop = 1
			:: LOCKED && (mode[k] != NORMAL || !pod[k]) -> renew()
			:: LOCKED && mode[k] == NORMAL && pod[k] && stuck -> stop = 1; advice = ADV_REPAIR
			fi }
	:: kind[i] == verify_left ->
		atomic { if
			:: !LOCKED -> stop = 1
			:: LOCKED && (mode[k] == LEFT || !pod[k]) -> renew()
			:: LOCKED && !(mode[k] == LEFT || !pod[k]) && stuck -> stop = 1; advice = ADV_REPAIR
			fi }
	:: kind[i] == wait_pod_gone ->
		atomic { if
			:: !LOCKED -> stop = 1
			:: LOCKED && !pod[k] -> renew()
			:: LOCKED && pod[k] && stuck -> stop = 1; advice = ADV_REPAIR
			fi }
	:: kind[i] == wait_claims_gone ->
		atomic { if
			:: !LOCKED -> stop = 1
			:: LOCKED && !pvc[k] -> renew()
			:: LOCKED && pvc[k] && stuck -> stop = 1; advice = ADV_REPAIR
			fi }
	:: kind[i] == wait_released ->
		atomic { if
			:: !LOCKED -> stop = 1
			:: LOCKED && !entry[k] && removing == NONE -> renew()
			:: LOCKED && !(!entry[k] && removing == NONE) && stuck -> stop = 1; advice = ADV_REPAIR
			fi }
#else
	:: kind[i] == create_replace_task ->
		atomic { if
			:: !LOCKED -> stop = 1
#ifdef MUT_DONE_FROM_RECORD
			:: LOCKED && ((tk != T_NONE && tk_op == myop) || i < cp_cur) -> renew()
			:: LOCKED && !((tk != T_NONE && tk_op == myop) || i < cp_cur) ->
#else
			/* Done from the world: our task exists, or the operator did the work (the
			 * dead node's pod is deleted: replaced or being replaced) */
			:: LOCKED && ((tk != T_NONE && tk_op == myop) || !oldpod) -> renew()
			:: LOCKED && !((tk != T_NONE && tk_op == myop) || !oldpod) ->
#endif
				assert(oldpod);	/* work done is never asked again */
				if
				:: tk == T_NONE && !back -> tk = T_PENDING; tk_op = myop; renew()	/* still dead right now */
				:: tk == T_NONE && back -> stop = 1; advice = ADV_ABORT	/* the node is live: nothing to replace */
				:: tk != T_NONE -> stop = 1	/* a task not ours: the next command meets it */
				fi
			fi }
	:: kind[i] == wait_replaced ->
		do
		:: atomic { !LOCKED -> stop = 1; break }
		:: atomic { LOCKED && replaced -> renew(); break }
#ifdef MUT_NO_WATCH
		:: atomic { LOCKED && !replaced && tk == T_PENDING && tk_op == myop && back && !chance -> chance = 1 }
#else
		/* not started and its node came back: withdraw it (its label proves it ours) */
		:: atomic { LOCKED && !replaced && tk == T_PENDING && tk_op == myop && back ->
			tk = T_NONE; stop = 1; advice = ADV_ABORT; break }
#endif
#ifndef MUT_FAILED_UNREAD
		/* failed, the pod not deleted: withdraw it; resume asks again (if still dead) */
		:: atomic { LOCKED && !replaced && tk == T_FAILED && tk_op == myop ->
			tk = T_NONE; stop = 1; advice = ADV_RESUME; break }
		/* gone (TTL) without the work done: resume asks again */
		:: atomic { LOCKED && !replaced && tk == T_NONE && oldpod -> stop = 1; advice = ADV_RESUME; break }
#endif
		od
	:: kind[i] == wait_replace_task ->
		atomic { if
			:: !LOCKED -> stop = 1
			:: LOCKED && (tk == T_NONE || tk_op != myop || tk == T_DONE || tk == T_FAILED) -> renew()
			fi }
#endif
	fi
}

#ifdef OP_SCALE
/* abort: every node judged from the world in the operator's order: removed in full is
 * done whatever its steps say; asked and not removed is waited for (the operator
 * finishes it); not asked is kept, and so are the ones after it. Never a size written. */
inline abort() {
	k = NN - 1;
	do
	:: atomic { !LOCKED -> stop = 1; break }
	:: atomic { LOCKED && k >= TARGET && REMOVED(k) -> k-- }
	:: atomic { LOCKED && (k < TARGET || size > k) -> break }
#ifdef MUT_ABORT_RECORDED
	:: atomic { LOCKED && k >= TARGET && size <= k && !REMOVED(k) && k < NN - 1 && cp_cur < (NN - 1 - k) * PERNODE ->
		stop = 1; advice = ADV_RESUME; break }	/* "a step of an earlier node is not done": resume */
#endif
	:: atomic { LOCKED && k >= TARGET && size <= k && !REMOVED(k) && stuck -> stop = 1; advice = ADV_REPAIR; break }
	od;
	if
	:: !stop ->
		atomic { if
			:: !LOCKED -> stop = 1
			:: else -> lim = lim & ~B(myop)
			fi };
		if
		:: !stop -> finish()
		:: else -> skip
		fi
	:: else -> skip
	fi
}

/* repair-operator-state: the node verified out of the ring, the pod labelled and the
 * condition set (FACTS §8 A); it carries the scale in flight (its steps not done, and its
 * stream limit, now the repair's) */
inline repair() {
	atomic {
		if
		:: stuck ->
			if
#ifdef MUT_CARRY_REFUSE
			:: cp_present && (lim & B(cp_op)) -> advice = ADV_REPAIR	/* the carried plan is refused: nothing changed */
			:: !(cp_present && (lim & B(cp_op))) ->
#else
			:: true ->
#endif
				stuck = 0;
				if
				:: cp_present ->
					if
					:: lim & B(cp_op) -> lim = (lim & ~B(cp_op)) | B(nextop)
					:: else -> skip
					fi;
					cp_op = nextop; nextop++
				:: else -> skip
				fi
			fi
		:: else -> skip
		fi
	}
}
#else
/* abort: the task judged from the world: none (or not ours) -> nothing asked; not
 * started -> withdrawn; started, finished or failed (its claims deleted) -> refused,
 * resume finishes the replace */
inline abort() {
	atomic {
		if
		:: !LOCKED -> stop = 1
		:: LOCKED && (tk == T_NONE || tk_op != myop) -> skip
		:: LOCKED && tk == T_PENDING && tk_op == myop ->
#ifdef MUT_ABORT_TASK_REFUSE
			if
			:: back -> chance = 1
			:: else -> skip
			fi;
			stop = 1; advice = ADV_RESUME
#else
			tk = T_NONE
#endif
		:: LOCKED && tk_op == myop && (tk == T_RUNNING || tk == T_DONE || tk == T_FAILED) ->
			stop = 1; advice = ADV_RESUME
		fi
	};
	if
	:: !stop ->
		atomic { if
			:: !LOCKED -> stop = 1
			:: else -> lim = lim & ~B(myop)
			fi };
		if
		:: !stop -> finish()
		:: else -> skip
		fi
	:: else -> skip
	fi
}

inline repair() { skip }
#endif

proctype Run() {
	byte inc, i, k, myop;
	mtype cmd = C_NONE;
	bool stop, waitop;
	do
	:: inc < NINC ->
		inc++;
		{
			atomic {
				meet();
				if
				:: STALE_RUNNING -> cmd = C_NONE; waitop = 1
#ifdef OP_SCALE
				:: !STALE_RUNNING && stuck -> cmd = C_REPAIR	/* every command names it */
				:: !STALE_RUNNING && !stuck && cp_present ->
#else
				:: !STALE_RUNNING && cp_present ->
#endif
					if
					:: advice == ADV_REPAIR -> cmd = C_REPAIR
					:: advice == ADV_RESUME -> cmd = C_RESUME
					:: advice == ADV_ABORT -> cmd = C_ABORT
					:: advice == ADV_ANY && abort_asked -> cmd = C_ABORT
					:: advice == ADV_ANY && !abort_asked -> cmd = C_RESUME
					:: advice == ADV_ANY && !abort_asked && aborts > 0 -> aborts--; cmd = C_ABORT
					fi
#ifdef OP_SCALE
				:: !STALE_RUNNING && !stuck && !cp_present ->
#else
				:: !STALE_RUNNING && !cp_present ->
#endif
					if
					:: !planned || (!abort_asked && !AT_GOAL_WORLD) -> cmd = C_PLAN
					:: else -> cmd = C_NONE
					fi
				fi;
				if
				:: cmd == C_ABORT -> abort_asked = 1
				:: else -> skip
				fi;
				advice = ADV_ANY; stop = 0
			}
			if
			:: cmd == C_NONE && waitop ->
				/* the operator acts for no operation in flight: run again once it finished */
				atomic { !STALE_RUNNING -> waitop = 0 }
			:: cmd == C_NONE && !waitop -> goto out
			:: cmd == C_PLAN ->
				atomic { planned = 1; cp_present = 1; cp_op = nextop; nextop++; cp_cur = 0;
					cmd = C_RESUME }
			:: else -> skip
			fi;
			atomic { myop = cp_op; i = 0 }
			if
			:: cmd == C_RESUME -> run_steps()
			:: cmd == C_ABORT -> abort()
			:: cmd == C_REPAIR -> repair()
			:: else -> skip
			fi
		} unless { atomic { creq -> creq = 0; advice = ADV_ANY } };
		atomic { i = 0; k = 0; myop = 0; stop = 0; waitop = 0; cmd = C_NONE }
	:: else -> break
	od;
out:	skip
}

active proctype Crasher() {
end:	do
	:: atomic { crashes > 0 -> crashes--; creq = 1 }
	:: atomic { crashes > 0 -> crashes = 0 }	/* no more: a bounded event may also never come */
	od
}

#ifdef OP_SCALE
/* cass-operator's scale-down (FACTS §3, §8): the highest ordinal above the size, one at a
 * time; decommission (LEAVING), then LEFT; the StatefulSet shrunk; the claims and the
 * status entry deleted */
active proctype Operator() {
end:	do
	:: atomic { opr_up && !stuck && removing == NONE && sts > size && pod[sts - 1] ->
		removing = sts - 1;
		assert(removing >= TARGET);
		mode[removing] = LEAVING }
	:: atomic { opr_up && !stuck && removing != NONE && mode[removing] == LEFT && pod[removing] ->
		if
		:: stucks > 0 -> stucks--; stuck = 1	/* killed at the call: never comes back to it */
		:: true -> sts--; pod[removing] = 0
		fi }
	:: atomic { opr_up && !stuck && removing != NONE && !pod[removing] ->
		pvc[removing] = 0; entry[removing] = 0; removing = NONE }
	:: atomic { downs > 0 && opr_up -> downs--; opr_up = 0 }
	:: atomic { downs > 0 -> downs = 0 }
	:: atomic { !opr_up -> opr_up = 1 }
	od
}

active proctype Cassandra() {
end:	do
	:: atomic { removing != NONE && mode[removing] == LEAVING -> mode[removing] = LEFT }
	od
}
#else
/* cass-operator's replacenode task (FACTS §5, docs/how-it-works/replace.md §8): started at
 * any later time (it may be down or busy); it deletes the claims and the pod (draining a
 * live node first); completes once the pod is deleted (#748), or fails before */
active proctype Operator() {
end:	do
	:: atomic { opr_up && tk == T_PENDING ->
		assert(!(back && chance));	/* no live node replaced: not one the plugin saw back */
		tk = T_RUNNING; claims = 0 }
	:: atomic { opr_up && tk == T_RUNNING ->
		if
		:: fails > 0 -> fails--; tk = T_FAILED
		:: true -> oldpod = 0; tk = T_DONE
		fi }
	:: atomic { downs > 0 && opr_up -> downs--; opr_up = 0 }
	:: atomic { downs > 0 -> downs = 0 }
	:: atomic { !opr_up -> opr_up = 1 }
	od
}

/* the StatefulSet's new pod starts with the dead node's address and replaces it */
active proctype Cassandra() {
end:	do
	:: atomic { !oldpod && !replaced -> replaced = 1 }
	od
}
#endif

active proctype Environment() {
end:	do
	:: atomic { wipes > 0 && cp_present -> wipes--; cp_present = 0 }
	/* under weak fairness an event always enabled would come for sure: each may also never come */
	:: atomic { wipes > 0 -> wipes = 0 }
#ifndef OP_SCALE
	/* the dead node comes back before the operator started the task */
	:: atomic { backs > 0 && !back && claims && oldpod && (tk == T_NONE || tk == T_PENDING) -> backs--; back = 1 }
	:: atomic { ttls > 0 && (tk == T_DONE || tk == T_FAILED) -> ttls--; tk = T_NONE }
	:: atomic { backs > 0 -> backs = 0 }
	:: atomic { ttls > 0 -> ttls = 0 }
#endif
	od
}

active proctype Monitor() {
end:	do
	:: atomic { paused -> assert(!paused) }	/* the operator is never paused */
	od
}

init {
	byte j;
	atomic {
#ifdef OP_SCALE
		j = 0;
		do
		:: j < NN -> pod[j] = 1; pvc[j] = 1; entry[j] = 1; mode[j] = NORMAL; j++
		:: else -> break
		od;
#endif
		build();
#ifdef PRINT_STEPS
		j = 0;
		do
		:: j < nsteps -> printf("MODEL-STEP %e %d\n", kind[j], spod[j]); j++
		:: else -> break
		od
#else
		run Run()
#endif
	}
}

ltl recovers { <> GOAL }	/* the operation ends, nothing of it left, the operator never paused */
