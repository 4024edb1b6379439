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
    func acquire(_ id: SessionID, now: Int64, countsAsUse: Bool = true) throws -> Acquired {
        let shard = shard(for: id)
        for _ in 0..<4 {
            let since: UInt64
            switch shard.acquire(id, now: now, configuration) {
            case .found(let session): return .found(session)
            case .retired: return .retired
            case .expired(let stored):
                if stored { try forget(id) }
                return .none
            case .missing(let retirements): since = retirements
            }
            guard let record = try backend.load(id) else { return .none }
            if now - record.accessed > configuration.idleTimeoutSeconds
                || now - record.created > configuration.absoluteTimeoutSeconds
            {
                try forget(id)
                return .none
            }
            let loaded = Session(
                id: id, values: record.values, snapshot: record.keptSnapshot, created: record.created,
                accessed: countsAsUse ? now : record.accessed, persisted: true)
            loaded.state.withLock { $0.storedAccess = record.accessed }
            if let session = shard.insertOrAcquire(loaded, id: id, capacity: shardCapacity, loadedSince: since) {
                return .found(session)
            }
        }
        // Retired again and again while loading: it names nothing now.
        return .none
    }

    /// What memory knows of `id`: its session marked in use, a retired or expired id (an expired
    /// record's delete queued) — or `nil` when it must be loaded.
    func acquireInMemory(_ id: SessionID, now: Int64) throws -> Acquired? {
        switch shard(for: id).acquire(id, now: now, configuration) {
        case .found(let session): return .found(session)
        case .retired: return .retired
        case .expired(let stored):
            if stored { try forget(id) }
            return Acquired.none
        case .missing: return nil
        }
    }
}
