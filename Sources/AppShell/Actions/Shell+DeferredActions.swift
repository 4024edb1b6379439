import AppShellConcurrency
import AppShellHTTP
import AppShellSessions

/// Actions that await work (`RootController.awaiting`): answered once the work is done, their
/// second half run under the session's lock as a request is; cancelled when their session's id
/// changes, their client goes away or the server's shutdown timeout ends.
extension Shell {
    /// Answers an action that awaits work: the answer is deferred, and the work's task starts once
    /// this request's changes are committed (a request that fails starts none: its slot is given
    /// back). The task runs on Swift concurrency (on `ActionExecutor`'s threads) with no lock
    /// held; then `finishDeferred` re-enters the session, from the task.
    ///
    /// The task is cancelled, its second half never run:
    /// - when a commit rotates the session's id (`AsyncActions.cancel`): answered `retired` at once;
    /// - when the client goes away, or the server answers by itself at shutdown
    ///   (`PendingResponse.onCancel`): answered already.
    func finishLater(
        _ deferred: DeferredAction, _ action: ActionRequest, _ request: Request, _ app: LiveApp,
        _ session: SessionContext, ifRetired retired: Response,
        answer: @escaping @Sendable (ActionError?, Request, LiveApp, SessionContext) -> Response
    ) -> Response {
        let pending = PendingResponse()
        let (id, channel) = (session.id, app.channel)
        session.afterCommit { [self] in
            let handle = TaskHandle()
            let token = asyncActions.track(channel: channel, id: id) {
                pending.fulfil(retired)
                handle.cancel()
            }
            handle.set(
                Task(executorPreference: ActionExecutor.shared) { [self] in
                    defer { deferred.slot.release() }
                    // Answered already (the server is shutting down): nothing is done.
                    guard pending.claim() else {
                        _ = asyncActions.untrack(channel: channel, token)
                        return
                    }
                    let finish = await deferred.run()
                    // Cancelled by a rotation (answered then) unless this takes it first: from here
                    // on, `finishDeferred` finds the rotated id itself, under the session's lock.
                    guard asyncActions.untrack(channel: channel, token), let finish, !pending.isCancelled else {
                        return
                    }
                    pending.fulfil(
                        finishDeferred(finish, pending, action, request, id: id, ifRetired: retired, answer: answer))
                })
            pending.onCancel { handle.cancel() }
        }
        return .deferred(pending)
    }

    /// The rest of a deferred action, under the lock of the session `id` names, as a request's
    /// body runs (`handler`): its changes are committed all or nothing, what others see follows
    /// the commit, and a rotated id is sent as a cookie. When `id` names no live session any more
    /// (another request rotated it, or it ended), nothing runs and the answer is `retired`; when
    /// the request was answered or cancelled meanwhile (its client went away, the shutdown's
    /// timeout ended), nothing runs.
    private func finishDeferred(
        _ finish: DeferredAction.Finish, _ pending: PendingResponse, _ action: ActionRequest, _ request: Request,
        id: SessionID, ifRetired retired: Response,
        answer: (ActionError?, Request, LiveApp, SessionContext) -> Response
    ) -> Response {
        var rotatedTo: SessionID?
        let answered: Response?
        do {
            answered = try registry.withLiveSession(id) { session -> Response in
                // Answered or cancelled meanwhile (the client went away, the shutdown's timeout
                // ended): nothing is done. From here on neither answers it: what this commits is
                // what its answer says.
                guard pending.beginFinishing() else { return retired }
                let app = live(session)
                return try withBound(app, session) { () throws -> Response in
                    let committed = app.root.version
                    advance(app, session)
                    var outcome: ActionError?
                    do throws(ActionError) {
                        try noteChanges(app, session) { () throws(ActionError) in
                            try finish(app.root)
                            openNext(of: action, in: app)
                        }
                    } catch {
                        outcome = error
                    }
                    let response = answer(outcome, request, app, session)
                    try keep(app, in: session)
                    afterCommit(app, session, publishing: app.root.version != committed)
                    if session.id != session.originalID { rotatedTo = session.id }
                    return response
                }
            }
        } catch let error as StoreError {
            return .error(SessionResponder.unavailable(error, requestID: request.requestID), for: request)
        } catch let error as DeclarationError {
            // The app's mistake, not the store's: its changes were dropped, as any failed request's.
            Logger.appshell.error(
                "\(request.method) \(request.path) failed: \(error)",
                metadata: ["requestID": .string(request.requestID)])
            return .error(HTTPError(.internalServerError, "internal server error"), for: request)
        } catch {
            Logger.appshell.error("session store: \(error)", metadata: ["requestID": .string(request.requestID)])
            return .error(
                HTTPError(.serviceUnavailable, "the session store is unavailable; nothing was changed"), for: request)
        }
        guard var response = answered else { return retired }
        if let rotatedTo { response.headers.add(name: "Set-Cookie", value: cookie.header(for: rotatedTo)) }
        return response
    }
}

/// An action's task, cancelled at once if it is cancelled before it is known.
private final class TaskHandle: Sendable {
    private let state = Locked<(task: Task<Void, Never>?, cancelled: Bool)>((nil, false))

    /// Cancels the task (now, or as soon as it is set).
    func cancel() {
        let task = state.withLock { state -> Task<Void, Never>? in
            state.cancelled = true
            return state.task
        }
        task?.cancel()
    }

    /// The task to cancel.
    func set(_ task: Task<Void, Never>) {
        let cancelled = state.withLock { state -> Bool in
            state.task = task
            return state.cancelled
        }
        if cancelled { task.cancel() }
    }
}
