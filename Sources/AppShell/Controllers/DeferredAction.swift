import AppShellConcurrency
import AppShellHTTP

/// The rest of an action that awaits work (`RootController.awaiting`), taken by the shell after
/// the action's handler returned: the work runs in a task on Swift concurrency, off the session's
/// lock, and the action finishes under the lock again.
final class DeferredAction: Sendable {
    /// What finishes the action under the session's lock, on its root as it is then.
    typealias Finish = @Sendable (RootController) throws(ActionError) -> Void

    /// The action's place among those running at once (given back when its task ends).
    let slot: AsyncActions.Slot
    /// Runs the work and returns what finishes the action: with the work's value, or throwing
    /// the error the action is refused with. `nil` when the task was cancelled: nothing follows.
    let run: @Sendable () async -> Finish?

    init(slot: AsyncActions.Slot, run: @escaping @Sendable () async -> Finish?) {
        self.slot = slot
        self.run = run
    }

    /// What an action whose work failed with an error that is not an `ActionError` answers.
    static let failed = ActionError(
        status: 502, "The action could not get what it waited for; nothing was changed. Try again.")
}

extension RootController {
    /// Finishes the action being handled later, so that slow work does not hold the session's
    /// lock nor a server thread: `work` runs on `pool` (at its priority; take no lock there that
    /// requests wait for), then `finish` runs with its result under the session's lock at the
    /// normal priority, as a request's changes do — on the session's root controller as it is
    /// then (other requests of the session may have run meanwhile: check it is where `work`
    /// began). What `finish` changes is committed all or nothing and answers the request; the
    /// changes made before this call are committed first, on their own.
    ///
    /// A use of `awaiting(_:then:)`: the action's task awaits the pool. The request's answer waits
    /// (its connection suspended); when the session's id changed meanwhile (another login or
    /// logout), `finish` does not run and the answer is 409.
    ///
    /// `settle`, when given, runs with the result before `finish`, at the normal priority too and
    /// with no lock held, whatever became of the session or the client (to count a login's
    /// outcome: a lock that other logins take is not taken on the pool's low-priority thread).
    ///
    /// `work` waits in `pool`'s queue in `lane`, and the pool serves its lanes in turns: give the
    /// work of one client the same lane (a password check: its network, `PasswordCheckQuota.Place`)
    /// so that no client's queued work makes another's wait behind all of it. An action cancelled
    /// while its work waits in the queue (its client went away, the shutdown's timeout ended)
    /// drops it unrun, with no `settle`; once begun, `work` and `settle` run to their end.
    ///
    /// Returns false, queueing nothing, when `pool`'s queue is full or as many actions await work
    /// as the shell allows (refuse the action then: 503 with `Retry-After`), outside a request, or
    /// when this action already awaits work.
    package func finishLater<Result: Sendable>(
        on pool: WorkerPool, lane: String = "", running work: @escaping @Sendable () -> Result,
        settle: @escaping @Sendable (Result) -> Void = { _ in },
        then finish: @escaping @Sendable (RootController, Result) throws(ActionError) -> Void
    ) -> Bool {
        guard canAwait, let reservation = pool.reserve(lane: lane) else { return false }
        do {
            try awaiting { () async throws -> Result in
                // Cancelled before the pool ran it (nothing follows then), or the pool stopped.
                guard let result = await reservation.value(of: work) else {
                    throw ActionError(status: 503, "The server is shutting down.", retryAfterSeconds: 5)
                }
                settle(result)
                return result
            } then: { root, result throws(ActionError) in
                try finish(root, result)
            }
        } catch {
            // Not queued: the reservation, let go of, gives its place back.
            return false
        }
        return true
    }
}

extension WorkerPool.Reservation {
    /// Runs `job` in the reserved place and returns its result, resumed at the normal priority
    /// (`submit(_:then:)`); `nil` when the job was not run: the task was cancelled before the
    /// pool came to it, or the pool dropped it (it stopped).
    fileprivate func value<Result: Sendable>(of job: @escaping @Sendable () -> Result) async -> Result? {
        let cancelled = Locked(false)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let once = ResumeOnce(continuation)
                submit {
                    cancelled.withLock { $0 } ? nil : job()
                } then: { result in
                    once.resume(result)
                }
            }
        } onCancel: {
            cancelled.withLock { $0 = true }
        }
    }
}

/// A continuation resumed once: with the job's result, or with `nil` when the job is let go of
/// unrun (a stopped pool drops it, and with it this box).
private final class ResumeOnce<Result: Sendable>: Sendable {
    private let continuation: Locked<CheckedContinuation<Result?, Never>?>

    init(_ continuation: CheckedContinuation<Result?, Never>) { self.continuation = Locked(continuation) }

    func resume(_ result: Result?) {
        let taken = continuation.withLock { continuation in
            defer { continuation = nil }
            return continuation
        }
        taken?.resume(returning: result)
    }

    deinit { resume(nil) }
}
