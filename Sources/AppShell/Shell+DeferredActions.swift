import AppShellHTTP
import AppShellSessions

/// Actions whose handler handed slow work off (a password check): answered once the work is done,
/// its second half run under the session's lock as a request is.
extension Shell {
    /// Answers an action whose handler handed slow work off (`RootController.finishLater`): the
    /// answer is deferred, and the work is queued once this request's changes are committed (a
    /// request that fails queues nothing: its place in the pool is given back). On a pool thread
    /// the work runs with no lock held, at the pool's priority; then `finishDeferred` re-enters the
    /// session at the normal priority, on the pool's foreman thread: never under the session's
    /// and its shard's locks on a `SCHED_IDLE` thread, which any normal work may preempt while
    /// other requests wait for those locks (`WorkerPool.Reservation.submit(_:then:)`).
    func finishLater(
        _ deferred: DeferredAction, _ action: ScreenAction, _ request: Request, _ session: SessionContext,
        ifRetired retired: Response,
        answer: @escaping @Sendable (ActionError?, Request, LiveApp, SessionContext) -> Response
    ) -> Response {
        let pending = PendingResponse()
        let id = session.id
        session.afterCommit { [self] in
            deferred.reservation.submit {
                // Answered already (the server is shutting down): nothing is done.
                pending.claim() ? deferred.start() : nil
            } then: { [self] done in
                guard let done else { return }
                done.settle()
                pending.fulfil(
                    finishDeferred(done.finish, action, request, id: id, ifRetired: retired, answer: answer))
            }
        }
        return .deferred(pending)
    }

    /// The rest of a deferred action, under the lock of the session `id` names, as a request's
    /// body runs (`handler`): its changes are committed all or nothing, what others see follows
    /// the commit, and a rotated id is sent as a cookie. When `id` names no live session any more
    /// (another request rotated it, or it ended), nothing runs and the answer is `retired`.
    private func finishDeferred(
        _ finish: @Sendable (RootController) throws(ActionError) -> Void, _ action: ScreenAction, _ request: Request,
        id: SessionID, ifRetired retired: Response,
        answer: (ActionError?, Request, LiveApp, SessionContext) -> Response
    ) -> Response {
        var rotatedTo: SessionID?
        let answered: Response?
        do {
            answered = try registry.withLiveSession(id) { session -> Response in
                let shell = live(session)
                return try withBound(shell, session) { () throws -> Response in
                    let committed = shell.root.version
                    advance(shell, session)
                    var outcome: ActionError?
                    do throws(ActionError) {
                        try noteChanges(shell, session) { () throws(ActionError) in
                            try finish(shell.root)
                            openNext(of: action, in: shell)
                        }
                    } catch {
                        outcome = error
                    }
                    let response = answer(outcome, request, shell, session)
                    try keep(shell, in: session)
                    afterCommit(shell, session, publishing: shell.root.version != committed)
                    if session.id != session.originalID { rotatedTo = session.id }
                    return response
                }
            }
        } catch let error as StoreError {
            return .error(SessionResponder.unavailable(error, requestID: request.requestID), for: request)
        } catch let error as DeclarationError {
            // The app's mistake, not the store's: its changes were dropped, as any failed request's.
            AccessLog.error("\(request.method) \(request.path) failed: \(error)", requestID: request.requestID)
            return .error(HTTPError(.internalServerError, "internal server error"), for: request)
        } catch {
            AccessLog.error("session store: \(error)", requestID: request.requestID)
            return .error(
                HTTPError(.serviceUnavailable, "the session store is unavailable; nothing was changed"), for: request)
        }
        guard var response = answered else { return retired }
        if let rotatedTo { response.headers.add(name: "Set-Cookie", value: cookie.header(for: rotatedTo)) }
        return response
    }
}
