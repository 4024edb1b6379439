import AppShellConcurrency

/// One slice of the registry's map, with its own lock and its own share of the memory cap.
final class Shard: Sendable {
    private let sessions = Locked<[SessionID: Session]>([:])

    enum Lookup {
        case found(Session)
        case expired
        case missing
    }

    var count: Int { sessions.withLock { $0.count } }

    /// Finds `id` and marks it in use; an expired session that nobody uses is removed. Taking the
    /// session's lock under the shard's is safe only because nobody holds it when `users` is 0.
    func acquire(_ id: SessionID, now: Int64, _ configuration: SessionConfiguration) -> Lookup {
        sessions.withLock { sessions in
            guard let session = sessions[id] else { return .missing }
            if session.isExpired(at: now, configuration) {
                if session.users.load(ordering: .relaxed) == 0 {
                    sessions[id] = nil
                    session.state.withLock { $0.retired = true }
                }
                return .expired
            }
            session.users.add(1, ordering: .relaxed)
            return .found(session)
        }
    }

    /// Inserts `session` under `id` and marks it in use, unless another request loaded the same
    /// id first: then that one is marked and returned.
    func insertOrAcquire(_ session: Session, id: SessionID, capacity: Int) -> Session {
        sessions.withLock { sessions in
            if let existing = sessions[id] {
                existing.users.add(1, ordering: .relaxed)
                return existing
            }
            session.users.add(1, ordering: .relaxed)
            sessions[id] = session
            Shard.evict(&sessions, capacity: capacity)
            return session
        }
    }

    /// Inserts `session` under `id` (after a rotation).
    func insert(_ session: Session, id: SessionID, capacity: Int) {
        sessions.withLock { sessions in
            sessions[id] = session
            Shard.evict(&sessions, capacity: capacity)
        }
    }

    func remove(_ id: SessionID) { sessions.withLock { _ = $0.removeValue(forKey: id) } }

    /// Removes expired sessions nobody uses; returns how many.
    func removeExpired(now: Int64, _ configuration: SessionConfiguration) -> Int {
        let expired = sessions.withLock { sessions in
            let expired = sessions.filter {
                $0.value.isExpired(at: now, configuration) && $0.value.users.load(ordering: .relaxed) == 0
            }
            for id in expired.keys { sessions[id] = nil }
            return Array(expired.values)
        }
        for session in expired { session.state.withLock { $0.retired = true } }
        return expired.count
    }

    /// Drops the least recently used sessions nobody uses until the shard is an eighth below its
    /// capacity, so eviction runs once per many inserts rather than on every one.
    private static func evict(_ sessions: inout [SessionID: Session], capacity: Int) {
        guard sessions.count > capacity else { return }
        let target = capacity - capacity / 8
        let idle = sessions.filter { $0.value.users.load(ordering: .relaxed) == 0 }
            .map { (id: $0.key, lastAccess: $0.value.lastAccess.load(ordering: .relaxed)) }
            .sorted { $0.lastAccess < $1.lastAccess }
        for candidate in idle.prefix(max(0, sessions.count - target)) {
            sessions[candidate.id] = nil
        }
    }
}
