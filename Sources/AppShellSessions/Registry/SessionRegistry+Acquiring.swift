import AppShellConcurrency

// Finding the session an id presented to the registry names: in memory, or loaded from the backend.

extension SessionRegistry {
    /// What an id presented to the registry names.
    enum Acquired: Sendable {
        /// A live session, marked in use.
        case found(Session)
        /// An id a rotation retired moments ago.
        case retired
        /// Nothing (unknown, expired, or retired long ago).
        case none
    }

    /// The live session `id` names, marked in use; loads it from the backend when it is not in
    /// memory (as last used now, or — for the server's own work, which is no use — when its
    /// record says). `.none` when there is none or it expired (an expired one is removed),
    /// `.retired` when a rotation retired it moments ago.
    ///
    /// A load that read the record before a rotation renamed it would bring the retired id back:
    /// the shard refuses a loaded session whose id was retired since the load began, and the
    /// record is read again (the rename is in the backend before the id leaves memory).
    ///
    /// `storedVersion`, when given, is what the store said of the record's version moments ago
    /// (`acquireAll`'s one round trip): a session in memory is checked against it, and an id with
    /// no record (`.some(nil)`) names nothing without a load.
    func acquire(
        _ id: SessionID, now: Int64, countsAsUse: Bool = true, storedVersion: Int64?? = nil
    ) throws
        -> Acquired
    {
        let shard = shard(for: id)
        for _ in 0..<4 {
            let since: UInt64
            switch shard.acquire(id, now: now, configuration) {
            case .found(let session):
                guard isSharedStore else { return .found(session) }
                return try refreshed(session, id, now: now, storedVersion: storedVersion)
            case .retired: return .retired
            case .expired(let stored):
                // Another instance may have used it since this one did: its record says (loaded
                // next, and deleted only if it expired there too).
                if isSharedStore && stored { continue }
                if stored { try forget(id) }
                return .none
            case .missing(let retirements): since = retirements
            }
            if case .some(nil) = storedVersion { return .none }
            guard let record = try backend.load(id) else { return .none }
            if now - record.accessed > configuration.idleTimeoutSeconds
                || now - record.created > configuration.absoluteTimeoutSeconds
            {
                try forget(id)
                return .none
            }
            let loaded = Session(
                id: id, values: record.values, snapshot: record.keptSnapshot, created: record.created,
                accessed: countsAsUse ? now : record.accessed, persisted: true, user: record.user)
            loaded.state.withLock { state in
                state.storedAccess = record.accessed
                state.storedVersion = record.version
            }
            if let session = shard.insertOrAcquire(loaded, id: id, capacity: shardCapacity, loadedSince: since) {
                return .found(session)
            }
        }
        // Retired again and again while loading: it names nothing now.
        return .none
    }

    /// For a shared store: `session` (in memory, in use) checked against its stored record, which
    /// another instance may have changed, moved to a new id or deleted since this one last read
    /// or wrote it. Changed: the session takes the stored values and snapshot, and lets go of its
    /// live object (rebuilt from the snapshot). Gone: it leaves memory, its id retired (`.retired`:
    /// as after a rotation here, which is what another instance's login or logout did). A session
    /// whose own write is on its way is left as it is (its requests wait for that write).
    ///
    /// Only the stored version is read first (or taken from `storedVersion`, read moments ago):
    /// the record itself only when it changed.
    func refreshed(_ session: Session, _ id: SessionID, now: Int64, storedVersion: Int64?? = nil) throws -> Acquired {
        let known = session.state.withLock { state in
            state.userStoreCheck = nil
            return state.persisted && !state.committing ? state.storedVersion : nil
        }
        guard let known else { return .found(session) }
        let record: SessionRecord?
        do {
            let version = try storedVersion ?? backend.storedVersion(of: id)
            if version == known { return .found(session) }
            record = version == nil ? nil : try backend.load(id)
        } catch {
            session.users.subtract(1, ordering: .relaxed)
            throw error
        }
        let gone = session.state.withLock { state -> Bool in
            // Changed here meanwhile (a write, a rotation, an eviction): as it is.
            guard !state.retired, state.id == id, !state.committing else { return false }
            guard let record else {
                state.retired = true
                state.attachment = nil
                return true
            }
            guard record.version != state.storedVersion else { return false }
            state.values = record.values
            state.user = record.user
            state.snapshot = record.keptSnapshot
            state.storedAccess = record.accessed
            state.storedVersion = record.version
            state.attachment = nil
            state.memo = nil
            return false
        }
        guard gone else { return .found(session) }
        shard(for: id).retire(id, now: now)
        session.users.subtract(1, ordering: .relaxed)
        return .retired
    }

    /// `acquire` of each of `ids` (the loader's batch), in their order. In a shared store the
    /// stored versions of them all, and of the stores of the users those in memory are logged in
    /// as, are read first, in one round trip (`Session.State.userStoreCheck`); when that fails,
    /// each is acquired as alone. In a store that grants leases (`LeaseTerms`) the sessions that
    /// ask for theirs, or wait out another instance's (their last write was refused), are checked
    /// by `checkLeases` instead, in one round trip more: a session still leased elsewhere is put
    /// off (`SessionLoader.Step.later`).
    func acquireAll(_ ids: [SessionID], now: Int64) -> [SessionLoader.Step] {
        guard isSharedStore else { return ids.map { id in .loaded(Result { try acquire(id, now: now) }) } }
        let terms = backend.leaseTerms
        var plain: [Int] = []
        var leasing: [Int: LeaseRequest] = [:]
        // The versions memory knows (nil: none held), and the users of those held.
        var known: [Int64?] = []
        var users = Set<String>()
        for (index, id) in ids.enumerated() {
            let held = shard(for: id).heldSession(id)?.state.withLock { state in
                state.persisted ? (state.user, state.storedVersion, state.asksLease || state.leaseUntil > 0) : nil
            }
            known.append(held?.1)
            if terms != nil, let (user, version, asks) = held, asks || version == -1 {
                leasing[index] = LeaseRequest(id: id, user: user, asks: version != -1)
                continue
            }
            plain.append(index)
            if let user = held?.0 { users.insert(user) }
        }
        let sent = TimerQueue.monotonicClock()
        var versions: [Int: Int64?] = [:]
        var stores: [String: Int64] = [:]
        let sortedUsers = users.sorted()
        if !plain.isEmpty, let read = try? backend.storedVersions(of: plain.map { ids[$0] }, userStoresOf: sortedUsers)
        {
            for (index, version) in zip(plain, read.sessions) { versions[index] = version }
            stores = Dictionary(uniqueKeysWithValues: zip(sortedUsers, read.userStores))
        }
        let requests = leasing.keys.sorted()
        var answers: [Int: LeaseAnswer] = [:]
        if !requests.isEmpty, let read = try? backend.checkLeases(requests.map { leasing[$0]! }) {
            answers = Dictionary(uniqueKeysWithValues: zip(requests, read))
        }
        return ids.indices.map { index in
            let answer = answers[index]
            if let answer, leasing[index]?.asks == false, answer.othersMilliseconds > 0 {
                // Asked to give it up (`RedisScript.lease`): look again soon.
                let waits = shard(for: ids[index]).heldSession(ids[index])?.state.withLock { state in
                    defer { state.leaseWaits += 1 }
                    return state.leaseWaits
                }
                return .later(milliseconds: Self.leaseWait(left: answer.othersMilliseconds, waits: waits ?? 8))
            }
            return .loaded(
                Result {
                    let stored = answer.map { .some($0.version) } ?? versions[index]
                    let acquired = try acquire(ids[index], now: now, storedVersion: stored)
                    guard case .found(let session) = acquired, stored != nil else { return acquired }
                    session.state.withLock { state in
                        // Nobody else wrote it since this instance last knew it: ask for the lease.
                        state.asksLease = known[index] != nil && stored == known[index]
                        if let answer, let terms, let request = leasing[index] {
                            adopt(answer, of: request, session, &state, sent: sent, terms)
                        } else {
                            state.leaseUntil = 0
                            if !stores.isEmpty {
                                state.userStoreCheck = state.user.flatMap { user in stores[user].map { (user, $0) } }
                            }
                        }
                    }
                    return acquired
                })
        }
    }

    /// What memory knows of `id`: its session marked in use, a retired or expired id (an expired
    /// record's delete queued) — or `nil` when it must be loaded.
    func acquireInMemory(_ id: SessionID, now: Int64) throws -> Acquired? {
        switch shard(for: id).acquire(id, now: now, configuration) {
        case .found(let session): return .found(session)
        case .retired: return .retired
        case .expired(let stored):
            // In a shared store, as `acquire` does: the record says.
            if isSharedStore && stored { return nil }
            if stored { try forget(id) }
            return Acquired.none
        case .missing: return nil
        }
    }
}
