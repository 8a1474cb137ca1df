"""Synchronisation planning: one algorithm for the emulator's ``--sync auto`` and the compiler's
InsertSync pass.

A function is seen as a tree of structured control flow (:mod:`.model`): accesses that run on a
pipe (taken from the ISA records) and read or write memory, loops, ifs, whiles, calls. The planner
(:mod:`.plan`) finds every hazard between accesses on different pipes (or on a pipe that does not
complete in order) that nothing orders yet, and places set/wait pairs and barriers; event ids are
allocated (:mod:`.events`); the result is proven (:mod:`.verify`) and fixed until it holds
(:mod:`.insert`). Clients only translate: :mod:`.pto` / :mod:`.pto_text` for the `.pto` AST, the
compiler's ``passes/insert_sync.py`` for its IR.

The invariant kept, for every value of the scalar arguments:

1. **Balanced regions.** Every set/wait pair lives in one region: its set and its wait are ops of
   the same block, the set first (a loop-carried pair: wait then set in the loop body, plus one set
   before and one wait after the outermost directly enclosing loop). So every path through every
   region - each arm of an if, each loop iteration, zero iterations - leaves every flag in the state
   it found it, a wait always has its set before it, and a function returns with no flag set.
2. **No flag reused early.** A set of a flag fires only after the previous wait of that flag has
   consumed it (happens-before through flags, barriers and in-order queues); otherwise the two
   pairs get different event ids or the set is preceded by a full barrier.
3. **Every hazard ordered.** For any two conflicting accesses on pipes that do not order them
   (across iterations, arms and calls), a chain of flags and barriers orders the earlier before the
   later: the planner's walk (every loop body twice, both arms of every if, merged by taking the
   least knowledge) finds no unordered hazard.

1 and 2 are checked on every path by :func:`ptoisa.sync.verify.check` for every planned function;
3 is what the planner's fixpoint guarantees, and the property tests check all three by running
random kernels against program order.
"""
