import AppShellConcurrency

/// One slice of the registry's map, with its own lock and its own share of the memory cap.
///
/// A session that holds nothing yet (a cookieless client's first request) is only an entry of
/// the map, with no object and no lock of its own; it becomes a `Session` when its id comes back.
/// So a flood of cookieless requests costs a map entry each, made and dropped without allocating.
///
/// The cap is kept with the CLOCK (second chance) approximation of least-recently-used: the
/// shard remembers the order in which sessions got their place; when it is over its capacity,
/// the oldest place is looked at first, and a session used since it got that place goes to the
/// back instead of out. Each insert costs a constant amount of work on average, however large the
/// shard.
final class Shard: Sendable {
    private let map = Locked(Map())

    /// A session that holds nothing: no values, no snapshot, no attachment.
    struct EmptySession {
        /// When it was created (Unix seconds); it has not been used since.
        let created: Int64
        /// The app's memo (see `SessionContext.memo`).
        let memo: Int64?

        /// Whether it has expired at `now`: never used since it was created, its idle time is its age.
        func isExpired(at now: Int64, _ configuration: SessionConfiguration) -> Bool {
            now - created > min(configuration.idleTimeoutSeconds, configuration.absoluteTimeoutSeconds)
        }
    }

    private enum Entry {
        case held(Session)
        case empty(EmptySession)
    }

    /// The sessions and their places in the eviction order.
    private struct Map {
        var entries: [SessionID: Entry] = [:]
        /// Ids in the order they got their place, oldest first from `head`, with the access time
        /// they had then. Entries of sessions that left since are skipped when they come up.
        var order: [Place] = []
        var head = 0
        /// Ids retired by rotation so far (a counter that only grows).
        var retirements: UInt64 = 0
        /// The recently retired ids, with the value of `retirements` when each was retired (and
        /// when), and their order, oldest first: a load that began before an id's retirement is
        /// refused, and a request presenting an id retired moments ago is told so.
        var tombstones: [SessionID: Tombstone] = [:]
        var tombstoneOrder: [SessionID] = []
        var tombstoneHead = 0
        /// The `retirements` value of the newest tombstone forgotten (to bound them): a load that
        /// began before it cannot be checked, so it is refused and reads the record again.
        var forgottenThrough: UInt64 = 0
    }

    /// How many retired ids a shard remembers.
    static let tombstoneCapacity = 1024

    /// A retired id: the shard's count of retirements when it was retired, and the time (Unix
    /// seconds).
    struct Tombstone {
        let retirement: UInt64
        let at: Int64
    }

    private struct Place {
        let id: SessionID
        /// Whether a held session got the place (else an empty one, which may have become a held
        /// session since, under the same place).
        let held: Bool
        /// The held session that got the place; the id may name another session, or none, by the
        /// time the place comes up. Held weakly: a session that left the map (evicted, expired,
        /// its id rotated) must not stay alive, with its app, until its stale place is dropped.
        weak var session: Session?
        let since: Int64

        init(id: SessionID, session: Session?, since: Int64) {
            self.id = id
            self.held = session != nil
            self.session = session
            self.since = since
        }

        /// Whether this place is `session`'s own.
        func belongs(to session: Session) -> Bool { !held || self.session === session }
    }

    enum Lookup {
        case found(Session)
        /// It expired and was removed; `stored` says whether the backend may hold it.
        case expired(stored: Bool)
        /// Not in memory; `retirements` is the shard's count of retired ids when this was looked
        /// up (pass it to `insertOrAcquire` with what the backend held).
        case missing(retirements: UInt64)
        /// Retired by a rotation at most `SessionRegistry.retiredIDGraceSeconds` ago: a request
        /// sent before its client had the new id.
        case retired
    }

    /// Whether `id` is in the map (held or empty).
    func contains(_ id: SessionID) -> Bool { map.withLock { $0.entries[id] != nil } }

    var count: Int { map.withLock { $0.entries.count } }

    /// Sessions held as objects (not bare entries).
    var heldCount: Int {
        map.withLock { map in
            map.entries.values.reduce(0) { count, entry in
                if case .held = entry { return count + 1 }
                return count
            }
        }
    }

    /// The session `id` names in memory, if it is held as one; nothing is marked in use (read its
    /// state only after this returned: a session's lock is never taken under the shard's here).
    func heldSession(_ id: SessionID) -> Session? {
        map.withLock { map in
            if case .held(let session) = map.entries[id] { return session }
            return nil
        }
    }

    /// Whether `id` names a session in memory that has not expired; `nil` when it is not in memory.
    /// It changes nothing: no access time, no removal, nothing marked in use.
    func names(_ id: SessionID, now: Int64, _ configuration: SessionConfiguration) -> Bool? {
        map.withLock { map in
            switch map.entries[id] {
            case nil: return nil
            case .empty(let empty): return !empty.isExpired(at: now, configuration)
            case .held(let session): return !session.isExpired(at: now, configuration)
            }
        }
    }

    /// Finds `id` and marks it in use (an empty session becomes a `Session` now); an expired
    /// session that nobody uses is removed. Taking the session's lock under the shard's is safe
    /// only because nobody holds it when `users` is 0.
    func acquire(_ id: SessionID, now: Int64, _ configuration: SessionConfiguration) -> Lookup {
        map.withLock { map in
            switch map.entries[id] {
            case nil:
                if let tombstone = map.tombstones[id], now - tombstone.at <= SessionRegistry.retiredIDGraceSeconds {
                    return .retired
                }
                return .missing(retirements: map.retirements)
            case .empty(let empty):
                if empty.isExpired(at: now, configuration) {
                    map.entries[id] = nil
                    return .expired(stored: false)
                }
                let session = Session(
                    id: id, values: [:], snapshot: nil, created: empty.created, accessed: now, persisted: false,
                    memo: empty.memo)
                session.users.add(1, ordering: .relaxed)
                map.entries[id] = .held(session)
                return .found(session)
            case .held(let session):
                if session.isExpired(at: now, configuration) {
                    if session.users.load(ordering: .relaxed) == 0 {
                        map.entries[id] = nil
                        session.state.withLock { $0.retired = true }
                    }
                    return .expired(stored: true)
                }
                session.users.add(1, ordering: .relaxed)
                return .found(session)
            }
        }
    }

    /// Inserts `session`, just loaded from the backend, under `id` and marks it in use — unless
    /// another request loaded the same id first (then that one is marked and returned), or `id`
    /// was retired since the load began (`retirements` from `acquire`): then `nil`, and the
    /// caller reads the record again, since the backend renamed it before the id was retired.
    func insertOrAcquire(
        _ session: Session, id: SessionID, capacity: Int, loadedSince retirements: UInt64
    )
        -> Session?
    {
        map.withLock { map in
            if case .held(let existing) = map.entries[id] {
                existing.users.add(1, ordering: .relaxed)
                return existing
            }
            if map.retirements != retirements {
                if let tombstone = map.tombstones[id], tombstone.retirement > retirements { return nil }
                if map.forgottenThrough > retirements { return nil }
            }
            session.users.add(1, ordering: .relaxed)
            Shard.insert(.held(session), id: id, into: &map, capacity: capacity)
            return session
        }
    }

    /// Removes `id`, whose session moved to a new id at `now`, and remembers it as retired for
    /// the loads already under way and the requests sent with it before the client had the new id.
    func retire(_ id: SessionID, now: Int64) {
        map.withLock { map in
            map.entries[id] = nil
            map.retirements += 1
            map.tombstones[id] = Tombstone(retirement: map.retirements, at: now)
            map.tombstoneOrder.append(id)
            if map.tombstoneOrder.count - map.tombstoneHead > Shard.tombstoneCapacity {
                let oldest = map.tombstoneOrder[map.tombstoneHead]
                map.tombstoneHead += 1
                if let tombstone = map.tombstones.removeValue(forKey: oldest) {
                    map.forgottenThrough = max(map.forgottenThrough, tombstone.retirement)
                }
            }
            if map.tombstoneHead > Shard.tombstoneCapacity {
                map.tombstoneOrder.removeFirst(map.tombstoneHead)
                map.tombstoneHead = 0
            }
        }
    }

    /// The sessions held in memory now (not those that hold nothing).
    func heldSessions() -> [Session] {
        map.withLock { map in
            map.entries.values.compactMap { entry in
                if case .held(let session) = entry { return session }
                return nil
            }
        }
    }

    /// Inserts `session` under `id` (a new one, or one whose id was rotated).
    func insert(_ session: Session, id: SessionID, capacity: Int) {
        map.withLock { Shard.insert(.held(session), id: id, into: &$0, capacity: capacity) }
    }

    /// Inserts a new session that holds nothing under `id`.
    func insert(_ empty: EmptySession, id: SessionID, capacity: Int) {
        map.withLock { Shard.insert(.empty(empty), id: id, into: &$0, capacity: capacity) }
    }

    /// Removes expired sessions nobody uses; returns how many.
    func removeExpired(now: Int64, _ configuration: SessionConfiguration) -> Int {
        let (retired, removed) = map.withLock { map -> ([Session], Int) in
            var retired: [Session] = []
            var gone: [SessionID] = []
            for (id, entry) in map.entries {
                switch entry {
                case .held(let session):
                    if session.isExpired(at: now, configuration) && session.users.load(ordering: .relaxed) == 0 {
                        retired.append(session)
                        gone.append(id)
                    }
                case .empty(let session):
                    if session.isExpired(at: now, configuration) { gone.append(id) }
                }
            }
            for id in gone { map.entries[id] = nil }
            return (retired, gone.count)
        }
        for session in retired { session.state.withLock { $0.retired = true } }
        return removed
    }

    private static func insert(_ entry: Entry, id: SessionID, into map: inout Map, capacity: Int) {
        map.entries[id] = entry
        switch entry {
        case .held(let session):
            map.order.append(Place(id: id, session: session, since: session.lastAccess.load(ordering: .relaxed)))
        case .empty(let empty):
            map.order.append(Place(id: id, session: nil, since: empty.created))
        }
        evict(&map, capacity: capacity)
        compact(&map)
    }

    /// Takes places from the front of the order until the shard is within its capacity: a
    /// session nobody uses and nobody used since it got its place leaves; one used since goes to
    /// the back (once per round, so that a shard where every session is busy still ends).
    private static func evict(_ map: inout Map, capacity: Int) {
        var chances = map.order.count - map.head
        while map.entries.count > capacity && map.head < map.order.count {
            let place = map.order[map.head]
            map.head += 1
            // One lookup: the id may have left the map since, or name another session by now.
            guard let removed = map.entries.removeValue(forKey: place.id) else { continue }
            guard case .held(let session) = removed else { continue }  // empty: never used since
            if !place.belongs(to: session) {
                map.entries[place.id] = removed  // the place is another session's
                continue
            }
            let lastAccess = session.lastAccess.load(ordering: .relaxed)
            let inUse = session.users.load(ordering: .relaxed) > 0
            if inUse || (lastAccess > place.since && chances > 0) {
                chances -= 1
                map.entries[place.id] = removed
                map.order.append(Place(id: place.id, session: session, since: lastAccess))
                if chances < 0 { break }
            }
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
        if map.order.count - map.head > 2 * map.entries.count + 64 {
            var placed = Set<SessionID>()
            map.order = map.order[map.head...].filter { place in
                guard let entry = map.entries[place.id], placed.insert(place.id).inserted else { return false }
                if case .held(let session) = entry { return place.belongs(to: session) }
                return true
            }
            map.head = 0
        }
    }
}
