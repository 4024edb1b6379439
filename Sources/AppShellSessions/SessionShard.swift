import AppShellConcurrency

/// One slice of the registry's map, with its own lock and its own share of the memory cap.
///
/// The cap is kept with the CLOCK (second chance) approximation of least-recently-used: the
/// shard remembers the order in which sessions got their place; when it is over its capacity,
/// the oldest place is looked at first, and a session used since it got that place goes to the
/// back instead of out. Each insert costs a constant amount of work on average, however large the
/// shard (a flood of cookieless requests inserts a session per request).
final class Shard: Sendable {
    private let map = Locked(Map())

    /// The sessions and their places in the eviction order.
    private struct Map {
        var sessions: [SessionID: Session] = [:]
        /// Ids in the order they got their place, oldest first from `head`, with the access time
        /// they had then. Entries of sessions that left since are skipped when they come up.
        var order: [Place] = []
        var head = 0
    }

    private struct Place {
        let id: SessionID
        let since: Int64
    }

    enum Lookup {
        case found(Session)
        case expired
        case missing
    }

    var count: Int { map.withLock { $0.sessions.count } }

    /// Finds `id` and marks it in use; an expired session that nobody uses is removed. Taking the
    /// session's lock under the shard's is safe only because nobody holds it when `users` is 0.
    func acquire(_ id: SessionID, now: Int64, _ configuration: SessionConfiguration) -> Lookup {
        map.withLock { map in
            guard let session = map.sessions[id] else { return .missing }
            if session.isExpired(at: now, configuration) {
                if session.users.load(ordering: .relaxed) == 0 {
                    map.sessions[id] = nil
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
        map.withLock { map in
            if let existing = map.sessions[id] {
                existing.users.add(1, ordering: .relaxed)
                return existing
            }
            session.users.add(1, ordering: .relaxed)
            Shard.insert(session, id: id, into: &map, capacity: capacity)
            return session
        }
    }

    /// Inserts `session` under `id` (after a rotation).
    func insert(_ session: Session, id: SessionID, capacity: Int) {
        map.withLock { Shard.insert(session, id: id, into: &$0, capacity: capacity) }
    }

    func remove(_ id: SessionID) { map.withLock { _ = $0.sessions.removeValue(forKey: id) } }

    /// Removes expired sessions nobody uses; returns how many.
    func removeExpired(now: Int64, _ configuration: SessionConfiguration) -> Int {
        let expired = map.withLock { map in
            let expired = map.sessions.filter {
                $0.value.isExpired(at: now, configuration) && $0.value.users.load(ordering: .relaxed) == 0
            }
            for id in expired.keys { map.sessions[id] = nil }
            return Array(expired.values)
        }
        for session in expired { session.state.withLock { $0.retired = true } }
        return expired.count
    }

    private static func insert(_ session: Session, id: SessionID, into map: inout Map, capacity: Int) {
        map.sessions[id] = session
        map.order.append(Place(id: id, since: session.lastAccess.load(ordering: .relaxed)))
        evict(&map, capacity: capacity)
        compact(&map)
    }

    /// Takes places from the front of the order until the shard is within its capacity: a
    /// session nobody uses and nobody used since it got its place leaves; one used since goes to
    /// the back (once per round, so that a shard where every session is busy still ends).
    private static func evict(_ map: inout Map, capacity: Int) {
        var chances = map.order.count - map.head
        while map.sessions.count > capacity && map.head < map.order.count {
            let place = map.order[map.head]
            map.head += 1
            guard let session = map.sessions[place.id] else { continue }  // it left since
            let lastAccess = session.lastAccess.load(ordering: .relaxed)
            let inUse = session.users.load(ordering: .relaxed) > 0
            if inUse || (lastAccess > place.since && chances > 0) {
                chances -= 1
                map.order.append(Place(id: place.id, since: lastAccess))
                if chances < 0 { break }
                continue
            }
            map.sessions[place.id] = nil
        }
    }

    /// Drops the places already taken from the front, and the places of sessions that left when
    /// they outnumber the sessions (ids rotated, expired or removed while the shard was below
    /// its capacity), so the order stays about as long as the map.
    private static func compact(_ map: inout Map) {
        if map.head > 64 && map.head * 2 > map.order.count {
            map.order.removeFirst(map.head)
            map.head = 0
        }
        if map.order.count - map.head > 2 * map.sessions.count + 64 {
            var placed = Set<SessionID>()
            map.order = map.order[map.head...].filter { map.sessions[$0.id] != nil && placed.insert($0.id).inserted }
            map.head = 0
        }
    }
}
