import AppShellConcurrency
import Synchronization

/// The thread that loads, for the server's threads, the sessions that are not in memory (after a
/// restart, or once the memory cap let them go): a request that finds its session missing is
/// deferred (`SessionRegistry.Entry.busy`) and runs again once its session is loaded, so that no
/// server thread reads the store — a disk read of a cold page, or a turn of the store's reading
/// connection that another thread holds. A registry with a store writer has one.
///
/// Requests for the same session while it loads wait for the same load. A load may also be put
/// off (`Step.later`): the session's lease is another instance's for a few hundred milliseconds
/// more (`LeaseTerms`); its requests wait meanwhile, and the loader serves other ids.
final class SessionLoader: Sendable {
    typealias Outcome = Result<SessionRegistry.Acquired, any Error>

    /// What the loading lookup did with an id.
    enum Step: Sendable {
        /// Its outcome, for those waiting.
        case loaded(Outcome)
        /// Nothing yet: load it again in about `milliseconds`.
        case later(milliseconds: Int)
    }

    /// The ids to load and who waits for each, guarded by the service's condition.
    private final class State: @unchecked Sendable {
        var queue = FIFOQueue<SessionID>()
        var waiting: [SessionID: [@Sendable (LoadedSession) -> Void]] = [:]
        /// The ids put off, with when to load them again (monotonic milliseconds).
        var later: [(id: SessionID, due: Int64)] = []
    }

    private let state = State()
    private let service: ServiceThread

    /// A loader whose thread, named `name`, starts with `start`.
    init(name: String = "appshell-loader") { service = ServiceThread(name: name) }

    /// The most ids loaded at once (`start`'s `acquire` gets them together).
    static let batchLimit = 64

    /// Starts the thread, which loads the ids queued meanwhile together with `acquire` (the
    /// registry's loading lookup, which returns an outcome for each id, in their order): a shared
    /// store checks them all in one round trip.
    func start(_ acquire: @escaping @Sendable ([SessionID]) -> [Step]) {
        service.start { [self] in run(acquire) }
    }

    /// Loads `id` and then calls `done`, on the loader's thread, with the outcome; at once, with
    /// an error, when the loader stopped.
    func load(_ id: SessionID, then done: @escaping @Sendable (LoadedSession) -> Void) {
        let condition = service.condition
        condition.lock()
        guard !service.isStopping else {
            condition.unlock()
            done(LoadedSession(.failure(StoreError("the session store is closing: the session was not loaded"))))
            return
        }
        if state.waiting[id] != nil {
            state.waiting[id]?.append(done)
        } else {
            state.waiting[id] = [done]
            state.queue.append(id)
            condition.signal()
        }
        condition.unlock()
    }

    /// Loads what is queued, then ends the thread; returns once it ended. Called on the loader's
    /// own thread (the registry's last reference dropped there), it does not wait: the thread
    /// ends once it returns to its loop.
    func stop() { service.stop() }

    private func run(_ acquire: @Sendable ([SessionID]) -> [Step]) {
        let condition = service.condition
        while true {
            condition.lock()
            // Once stopping, those put off are loaded at once (and fail if put off again).
            let hasWork = { !self.state.queue.isEmpty || (self.service.isStopping && !self.state.later.isEmpty) }
            let waited =
                if let due = state.later.map(\.due).min() {
                    service.waitForWork(hasWork, atMostMilliseconds: Int(max(1, due - TimerQueue.monotonicClock())))
                } else {
                    service.waitForWork(hasWork)
                }
            guard waited else {
                condition.unlock()
                return
            }
            let now = TimerQueue.monotonicClock()
            for (id, due) in state.later where due <= now || service.isStopping { state.queue.append(id) }
            state.later.removeAll { $0.due <= now || service.isStopping }
            var ids: [SessionID] = []
            while ids.count < Self.batchLimit, let id = state.queue.popFirst() { ids.append(id) }
            condition.unlock()
            guard !ids.isEmpty else { continue }
            for (id, step) in zip(ids, acquire(ids)) {
                switch step {
                case .loaded(let outcome): hand(outcome, of: id)
                case .later(let milliseconds): putOff(id, milliseconds: milliseconds)
                }
            }
        }
    }

    /// Loads `id` again in about `milliseconds` — or, when stopping, fails it now.
    private func putOff(_ id: SessionID, milliseconds: Int) {
        let condition = service.condition
        condition.lock()
        let stopping = service.isStopping
        if !stopping { state.later.append((id, TimerQueue.monotonicClock() + Int64(milliseconds))) }
        condition.unlock()
        if stopping {
            hand(.failure(StoreError("the session store is closing: the session was not loaded")), of: id)
        }
    }

    /// Gives `outcome` to those waiting for `id`.
    private func hand(_ outcome: Outcome, of id: SessionID) {
        let condition = service.condition
        condition.lock()
        let waiters = state.waiting.removeValue(forKey: id) ?? []
        condition.unlock()
        // Each waiter holds the session in use until its request ran (one use came with it).
        if case .success(.found(let session)) = outcome, waiters.count > 1 {
            session.users.add(waiters.count - 1, ordering: .relaxed)
        }
        if waiters.isEmpty, case .success(.found(let session)) = outcome {
            session.users.subtract(1, ordering: .relaxed)
        }
        for waiter in waiters { waiter(LoadedSession(outcome)) }
    }
}

/// What loading a request's session found, handed to the request to enter its session with
/// (`SessionRegistry.enter(presented:after:_:)`). It keeps a found session in use until then, and
/// lets go of it if the request is not run again (the server answered it itself, at shutdown).
package final class LoadedSession: Sendable {
    private let outcome: Locked<SessionLoader.Outcome?>

    init(_ outcome: SessionLoader.Outcome) { self.outcome = Locked(outcome) }

    /// The outcome, once: `nil` after it was taken.
    func take() -> SessionLoader.Outcome? {
        outcome.withLock { outcome in
            defer { outcome = nil }
            return outcome
        }
    }

    deinit {
        if case .success(.found(let session))? = take() { session.users.subtract(1, ordering: .relaxed) }
    }
}
