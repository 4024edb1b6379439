import AppShellConcurrency
import Glibc
import Synchronization

/// Every live session: a sharded in-memory map over a `DefaultsBackend`, with idle and absolute
/// timeouts, a cap on sessions held in memory, and id rotation.
///
/// Lock order: a session's lock may be held while a shard's lock is taken, never the reverse.
/// A session is written to the backend only once it holds a value, so requests that never set
/// anything (a flood of cookieless requests) cause no writes — in a store shared by several
/// instances too: there a session that holds nothing is kept by its cookie (`SessionSeal`).
package final class SessionRegistry: Sendable {
    /// The timeouts and the cap.
    package let configuration: SessionConfiguration
    /// Where sessions with values are kept.
    package let backend: any DefaultsBackend
    /// Whether other instances write the same records (`DefaultsBackend.isShared`), read once:
    /// the request path asks it at every request.
    package let isSharedStore: Bool
    /// The thread that commits the requests' writes in groups, when the registry has one (see
    /// `StoreWriter`); without one, each request commits its own write on its own thread.
    package let writer: StoreWriter?
    /// The thread that loads the sessions not in memory, when the registry has a store writer
    /// (see `SessionLoader`); without one, a request loads its session itself (the memory store).
    let loader: SessionLoader?
    let shards: [Shard]
    let shardCapacity: Int
    let registration = RegistrationDomain()
    let clock: @Sendable () -> Int64
    let sweeper = Locked<SessionSweeper?>(nil)
    /// Sessions created since start.
    package let createdCount = Atomic<Int>(0)
    /// In a shared store: what seals the cookie of a session that holds nothing, so that any
    /// instance takes it up without it being stored (`nil` in the other stores).
    let seal: SessionSeal?
    /// The users' stores the sessions in memory read: kept between requests when only this
    /// process writes the store.
    let userStores: UserStoreCache
    /// The sessions whose lease this instance was granted (`LeaseTerms`), by store key.
    let leases = LeaseIndex()
    /// Leases granted to this instance since start (`LeaseTerms`).
    package let leasesGranted = Atomic<Int>(0)
    /// Leases this instance gave up since start because another instance asked for them.
    package let leasesReleased = Atomic<Int>(0)

    /// The current Unix time in seconds.
    package static let systemClock: @Sendable () -> Int64 = { Int64(time(nil)) }

    /// A registry over `backend`; `clock` gives the time in Unix seconds (tests move it). With
    /// `groupCommitQueue`, requests' writes go to a `StoreWriter` with room for that many waiting
    /// writes (for a backend whose commits are slow: SQLite), and sessions not in memory are
    /// loaded by a thread of their own (`SessionLoader`); without, each request writes its own
    /// changes and loads its session itself (the memory backend). In a shared store, `sealKey`
    /// (32 bytes, the same at every instance sharing it: the form-token key) seals the cookies of
    /// the sessions that hold nothing; without one, a random key serves this instance alone.
    package init(
        configuration: SessionConfiguration, backend: any DefaultsBackend, groupCommitQueue: Int? = nil,
        sealKey: [UInt8]? = nil, clock: @escaping @Sendable () -> Int64 = SessionRegistry.systemClock
    ) {
        self.configuration = configuration
        self.backend = backend
        isSharedStore = backend.isShared
        seal = backend.isShared ? SessionSeal(key: sealKey ?? SessionSeal.randomKey()) : nil
        self.writer = groupCommitQueue.map { StoreWriter(backend: backend, queueLimit: $0) }
        userStores = UserStoreCache(backend: backend, keeps: !backend.isShared)
        self.clock = clock
        let shardCount = min(64, max(1, configuration.maxSessionsInMemory / 256))
        shards = (0..<shardCount).map { _ in Shard() }
        shardCapacity = max(1, configuration.maxSessionsInMemory / shardCount)
        loader = writer == nil ? nil : SessionLoader()
        loader?.start { [weak self] ids in
            guard let self else { return ids.map { _ in .loaded(.success(.none)) } }
            return self.acquireAll(ids, now: self.clock())
        }
    }

    deinit {
        loader?.stop()
        writer?.stop()
    }

    /// Stops the session loader and the store writer, if there are, once they loaded and
    /// committed everything waiting (at shutdown, after the server stopped); a request's changes
    /// are refused (503) afterwards, and so is one whose session is not in memory.
    package func stopWriter() {
        loader?.stop()
        writer?.stop()
    }

    /// How many times a request whose write met a conflict (its session changed meanwhile through
    /// another instance sharing the store, or its user's store through another session of the
    /// user) is run again on what is stored before it is refused. Each conflict means another
    /// request's write went in (someone made progress), so the bound only stops a request that
    /// keeps losing: two instances whose sessions of one user write its store in a tight loop
    /// met 9 in a row about once in 500 requests here (8 was the bound then: a 503), each further
    /// one about half as often (UserStoreScaleOutTests).
    package static let conflictRetries = 32

    /// Sessions held in memory.
    package var count: Int { shards.reduce(0) { $0 + $1.count } }

    /// Sessions held in memory as objects: those that hold values, a snapshot or an app, or are
    /// in use. A session that holds nothing is a bare map entry and is not counted (walks every
    /// shard: for tests and diagnostics, not for the request path).
    package var heldCount: Int { shards.reduce(0) { $0 + $1.heldCount } }

    /// Whether the session `id` names is held in memory now (for tests and diagnostics: it
    /// neither loads nor touches the session).
    package func holdsInMemory(_ id: SessionID) -> Bool { shard(for: id).contains(id) }

    /// Registers fallback values for every session (volatile, never stored).
    package func register(defaults: [String: DefaultsValue]) { registration.register(defaults) }

    /// How long after a rotation a request presenting the retired id is answered as retired
    /// (`SessionContext.isRetired`: no session, no cookie) rather than given a new session: long
    /// enough for the requests a client sent before it had the new id, short enough that a
    /// client that never got the new id (its answer was lost) soon gets a session again.
    package static let retiredIDGraceSeconds: Int64 = 10

    /// What `enter(presented:_:)` did with a request.
    package enum Entry {
        /// The body ran and its changes are committed (or it made none): answer now.
        case committed(SessionContext)
        /// The body ran and its changes wait for the store writer: answer once the commit is
        /// done (`PendingCommit.whenDone`) — with 503 when it failed.
        case committing(SessionContext, PendingCommit)
        /// The body did not run: the session's changes of an earlier request are being committed,
        /// and what the body would see is not durable yet — or the session is not in memory and
        /// is being loaded. Enter again once it is free (`BusySession.whenFree`), with what it
        /// hands over.
        case busy(BusySession)
    }

    /// Runs `body` with the session `presentedID` names (or a new one), as `enterSession` does,
    /// without ever waiting: the request's thread (a server thread) is free again when this
    /// returns, and the request is answered as the entry says. Throws when the body throws or
    /// the store refuses the changes (a `StoreError` with `retryAfterSeconds` when the writer's
    /// queue is full), with nothing changed. `loaded` is what the wait of an earlier `.busy`
    /// handed over (the session loaded for this request). `seal` is what the cookie carried
    /// after the id, if anything (`SessionContext.cookieValue`).
    package func enter(
        presented presentedID: SessionID?, seal sealText: Substring? = nil, after loaded: LoadedSession? = nil,
        _ body: (SessionContext) throws -> Void
    ) throws -> Entry {
        let now = clock()
        guard let presentedID else { return try runNew(body, now: now) }
        let acquired: Acquired
        // Whether the session was taken on the trust of its lease (no check against the store).
        var onLease = false
        if let outcome = loaded?.take() {
            acquired = try outcome.get()
        } else if let loader {
            // A server thread never reads the store: a session not in memory is loaded elsewhere.
            guard let inMemory = try acquireInMemory(presentedID, now: now) else {
                return .busy(BusySession(loading: presentedID, on: loader))
            }
            // In a shared store another instance may have changed a stored session: the loader
            // checks it against the store first (`refreshed`).
            // Not while it holds the session's lease (`LeaseTerms`): nobody else writes it then.
            if isSharedStore, case .found(let session) = inMemory,
                session.state.withLock({
                    $0.persisted && !Session.trustsLease($0, at: TimerQueue.monotonicClock())
                })
            {
                session.users.subtract(1, ordering: .relaxed)
                return .busy(BusySession(loading: presentedID, on: loader))
            }
            onLease = isSharedStore
            acquired = inMemory
        } else {
            acquired = try acquire(presentedID, now: now)
        }
        switch acquired {
        case .found(let session):
            defer { session.users.subtract(1, ordering: .relaxed) }
            var rotatedAway = false
            let entry = try session.state.withLock { state -> Entry? in
                // While this request waited for the lock, another may have rotated the id (the
                // presented one no longer names the session: it is retired) or the session may
                // have expired and left the registry (then a new session is made).
                guard !state.retired else { return nil }
                guard presentedID == state.id else {
                    rotatedAway = true
                    return nil
                }
                if state.committing { return .busy(BusySession(session: session)) }
                // Given up meanwhile (another instance asked for it): checked first after all.
                if onLease, state.persisted, let loader, !Session.trustsLease(state, at: TimerQueue.monotonicClock()) {
                    return .busy(BusySession(loading: presentedID, on: loader))
                }
                return try run(body, session, &state, isNew: false, now: now)
            }
            if let entry { return entry }
            if rotatedAway { return .committed(try runRetired(body, id: presentedID)) }
        case .retired:
            return .committed(try runRetired(body, id: presentedID))
        case .none:
            // Not stored: a session that holds nothing, which its cookie keeps in a shared store.
            if let sealText, let sealed = try runSealed(body, id: presentedID, seal: sealText, now: now) {
                return sealed
            }
        }
        return try runNew(body, now: now)
    }

    /// Runs `body` for a request that presented `id`, retired by a rotation moments ago: with no
    /// session behind it, nothing kept, no after-commit work run and no cookie sent.
    private func runRetired(_ body: (SessionContext) throws -> Void, id: SessionID) throws -> SessionContext {
        let context = SessionContext(
            id: id, isNew: false, isStored: false, values: [:], registration: registration, snapshot: nil,
            attachment: nil, memo: nil, isRetired: true)
        defer { context.discarded() }
        try body(context)
        return context
    }

    /// Runs `body` with a new session. Nobody knows its id before the response carries it, so it
    /// needs no lock, and it enters the registry only when `body` returned and its values are
    /// stored: as a `Session` when it holds something, else as a bare map entry.
    private func runNew(_ body: (SessionContext) throws -> Void, now: Int64) throws -> Entry {
        let id = SessionID.random()
        createdCount.add(1, ordering: .relaxed)
        let context = SessionContext(
            id: id, isNew: true, isStored: false, values: [:], registration: registration, snapshot: nil,
            attachment: nil, memo: nil, readUserStore: userStores.read)
        do {
            try body(context)
        } catch {
            context.rolledBack()
            throw error
        }
        if holdsNothing(context) {
            if let seal {
                // A shared store: the next request may reach another instance, which finds the
                // session by its cookie. Not in memory here either, so every instance takes it up
                // the same way (from the store once it is stored, else from its cookie).
                context.cookieSeal = seal.seal(context.id, created: now, memo: context.memo)
            } else {
                shard(for: context.id).insert(
                    Shard.EmptySession(created: now, memo: context.memo), id: context.id, capacity: shardCapacity)
            }
            context.committed()
            return .committed(context)
        }
        let session = Session(
            id: context.id, values: [:], snapshot: nil, created: now, accessed: now, persisted: false)
        return try session.state.withLock { state in
            try commit(context, in: session, &state, now: now, accessed: now, isNew: true)
        }
    }

    /// Runs `body` with the session under its lock, then commits what it changed (see `commit`)
    /// — or, when the body failed, runs the context's rollback work, leaving the session as it
    /// was. A request `countsAsUse` (its time becomes the last access); the server's own work
    /// does not.
    func run(
        _ body: (SessionContext) throws -> Void, _ session: Session, _ state: inout Session.State, isNew: Bool,
        now: Int64, countsAsUse: Bool = true
    ) throws -> Entry {
        let accessed = countsAsUse ? now : session.lastAccess.load(ordering: .relaxed)
        if countsAsUse { session.lastAccess.store(now, ordering: .relaxed) }
        let check = state.userStoreCheck
        // Under the lease the store's version kept here is the stored one, or newer (this
        // instance's own writes).
        let leased = isSharedStore && Session.trustsLease(state, at: TimerQueue.monotonicClock())
        let context = SessionContext(
            id: state.id, isNew: isNew, isStored: state.persisted, values: state.values, registration: registration,
            snapshot: state.snapshot, attachment: state.attachment, memo: state.memo, user: state.user
        ) { [userStores] user throws(StoreError) in
            try userStores.read(user, checkedVersion: check?.user == user ? check?.version : nil, leased: leased)
        }
        do {
            try body(context)
            // The user's store could not be read: what the request did rests on nothing.
            if let failure = context.userStoreFailure { throw failure }
        } catch {
            // The live object may be half-changed: drop it so the next request rebuilds it from the
            // last committed snapshot, as if this request had never run. Nothing else was adopted.
            state.attachment = nil
            context.rolledBack()
            throw error
        }
        return try commit(context, in: session, &state, now: now, accessed: accessed, isNew: isNew)
    }

    /// Moves `session` from its retired id to `new` in memory, leaving a tombstone for `old`.
    func retire(_ old: SessionID, movingTo new: SessionID, _ session: Session, now: Int64) {
        shard(for: old).retire(old, now: now)
        shard(for: new).insert(session, id: new, capacity: shardCapacity)
    }

    func shard(for id: SessionID) -> Shard { shards[Int(id.shardKey % UInt64(shards.count))] }
}
