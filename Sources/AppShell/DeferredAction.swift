import AppShellConcurrency

/// The rest of an action that waits for slow work (a password check), taken by the shell after
/// the action's handler returned: the work runs on a worker pool, off the session's lock, and
/// the action finishes under the lock again (see `RootController.finishLater`).
final class DeferredAction: Sendable {
    /// What the work gave: `settle` runs whatever becomes of the session, `finish` under its lock.
    struct Done: Sendable {
        let settle: @Sendable () -> Void
        let finish: @Sendable (RootController) throws(ActionError) -> Void
    }

    /// The work's place in its pool's queue (given back if the action is dropped).
    let reservation: WorkerPool.Reservation
    /// Runs the work (on a pool thread) and returns what follows it, with its result.
    let start: @Sendable () -> Done

    init(reservation: WorkerPool.Reservation, start: @escaping @Sendable () -> Done) {
        self.reservation = reservation
        self.start = start
    }
}

extension RootController {
    /// Finishes the action being handled later, so that slow work does not hold the session's
    /// lock nor a server thread: `work` runs on `pool` (at its priority; take no lock there that
    /// requests wait for), then `finish` runs with its result under the session's lock at the
    /// normal priority (on the pool's foreman thread when the pool runs below it), as a request's
    /// changes do — on the session's root controller as it is then (other requests of the
    /// session may have run meanwhile: check it is where `work` began). What `finish` changes is committed all or nothing and answers the request; the
    /// changes made before this call are committed first, on their own.
    ///
    /// The request's answer waits (its connection suspended); when the session's id changed
    /// meanwhile (another login or logout), `finish` does not run and the answer is 409.
    ///
    /// `settle`, when given, runs with the result before `finish`, at the normal priority too and
    /// with no lock held, whatever became of the session (to count a login's outcome: a lock that
    /// other logins take is not taken on the pool's low-priority thread).
    ///
    /// `work` waits in `pool`'s queue in `lane`, and the pool serves its lanes in turns: give the
    /// work of one client the same lane (a password check: its network, `PasswordCheckQuota.Place`)
    /// so that no client's queued work makes another's wait behind all of it.
    ///
    /// Returns false, queueing nothing, when `pool`'s queue is full (refuse the action then: 503
    /// with `Retry-After`), outside a request, or when this action already handed work off.
    public func finishLater<Result: Sendable>(
        on pool: WorkerPool, lane: String = "", running work: @escaping @Sendable () -> Result,
        settle: @escaping @Sendable (Result) -> Void = { _ in },
        then finish: @escaping @Sendable (RootController, Result) throws(ActionError) -> Void
    ) -> Bool {
        guard session != nil, !isPreview, deferredAction == nil, let reservation = pool.reserve(lane: lane) else {
            return false
        }
        deferredAction = DeferredAction(reservation: reservation) {
            let result = work()
            return DeferredAction.Done(settle: { settle(result) }) { root throws(ActionError) in
                try finish(root, result)
            }
        }
        return true
    }
}
