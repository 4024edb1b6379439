import AppShellHTTP

extension RootController {
    /// Finishes the action being handled once `work` — which may `await` — is done: the request
    /// waits for it (its connection suspended, no server thread held), `work` runs in a task on
    /// Swift concurrency with no lock held, then `finish` runs with its value under the session's
    /// lock, on the session's root controller as it is then. What `finish` changes is committed
    /// all or nothing and answers the request, as an action's changes do; the changes the handler
    /// made before this call are committed first, on their own.
    ///
    /// ```swift
    /// handle(WeatherAction.self) { [unowned self] action, request throws(ActionError) in
    ///     switch action {
    ///     case .refresh:
    ///         let city = screen.city  // read under the lock: `work` sees no controller
    ///         try root.awaiting { [weather] in  // a Sendable service of the app's, not `self`
    ///             try await weather.forecast(for: city)  // off the lock; honours cancellation
    ///         } then: { root, forecast throws(ActionError) in
    ///             // Under the lock again; other requests of the session may have run meanwhile.
    ///             guard let screen = root.visibleScreen as? WeatherScreen else {
    ///                 throw ActionError(status: 409, "The weather screen was left; nothing was done.")
    ///             }
    ///             screen.forecast = forecast
    ///         }
    ///     }
    /// }
    /// ```
    ///
    /// `work` is `@Sendable`: it cannot touch the controllers (they belong to the session's
    /// lock); copy what it needs into it, and give back what it learnt as its value. Its task is
    /// cancelled — `Task.isCancelled`, or a `CancellationError` from what it awaits — when the
    /// session's id changes meanwhile (a login or logout elsewhere: the answer is 409 at once),
    /// when the client goes away, or when the server's shutdown timeout ends before it (503).
    /// Once cancelled, `finish` never runs, whatever `work` returns; once `finish` has begun under
    /// the lock, nothing cancels it, and its answer is the request's.
    ///
    /// When `work` throws an `ActionError`, the action is refused with it and `finish` does not
    /// run; any other error refuses it with 502, nothing changed (the error is logged). To show a
    /// failure on the screen, return it as a value (a `Result`) and throw from `finish`, which may
    /// change the screen.
    ///
    /// Throws (refusing the action, nothing changed) 503 with `Retry-After` when as many actions
    /// await work as the shell allows (`maxAsyncActions`), outside a request, or when this action
    /// awaits work already.
    public func awaiting<Value: Sendable>(
        _ work: @escaping @Sendable () async throws -> Value,
        then finish: @escaping @Sendable (RootController, Value) throws(ActionError) -> Void
    ) throws(ActionError) {
        guard canAwait else {
            throw ActionError(status: 503, "This action cannot wait for work now; nothing was changed.")
        }
        guard let slot = services?.shell.asyncActions.reserve() else {
            throw ActionError(
                status: 503, "The server is busy with other actions; nothing was changed. Try again in a moment.",
                retryAfterSeconds: 1)
        }
        deferredAction = DeferredAction(slot: slot) { () async -> DeferredAction.Finish? in
            do {
                let value = try await work()
                if Task.isCancelled { return nil }
                return { root throws(ActionError) in try finish(root, value) }
            } catch let error as ActionError {
                if Task.isCancelled { return nil }
                return { _ throws(ActionError) in throw error }
            } catch {
                if Task.isCancelled { return nil }
                Logger.appshell.error("an awaited action's work failed: \(error)")
                return { _ throws(ActionError) in throw DeferredAction.failed }
            }
        }
    }

    /// Whether the action being handled may await work: in a request (not a preview's copy) and
    /// awaiting none yet.
    var canAwait: Bool { session != nil && !isPreview && deferredAction == nil }
}
