import AppShellConcurrency

/// A backend that keeps records in memory: for tests and benchmarks. Nothing survives the process.
public final class MemoryDefaultsBackend: DefaultsBackend {
    private let records = Locked<[SessionID: SessionRecord]>([:])

    /// An empty store.
    public init() {}

    /// The record of `id`.
    public func load(_ id: SessionID) -> SessionRecord? { records.withLock { $0[id] } }

    /// Inserts or replaces the record of `id`.
    public func save(_ id: SessionID, _ record: SessionRecord) { records.withLock { $0[id] = record } }

    /// Sets the `accessed` time of `id`'s record.
    public func touch(_ id: SessionID, accessed: Int64) { records.withLock { $0[id]?.accessed = accessed } }

    /// Moves the record of `id` to `newID`.
    public func rename(_ id: SessionID, to newID: SessionID) {
        records.withLock { records in
            guard let record = records.removeValue(forKey: id) else { return }
            records[newID] = record
        }
    }

    /// Moves the record of `id` to `newID` with `record` as its content.
    public func rename(_ id: SessionID, to newID: SessionID, replacingWith record: SessionRecord) {
        records.withLock { records in
            records[id] = nil
            records[newID] = record
        }
    }

    /// Deletes the record of `id`.
    public func remove(_ id: SessionID) { _ = records.withLock { $0.removeValue(forKey: id) } }

    /// Deletes expired records.
    public func removeExpired(accessedBefore: Int64, createdBefore: Int64) -> Int {
        records.withLock { records in
            let before = records.count
            records = records.filter { $0.value.accessed >= accessedBefore && $0.value.created >= createdBefore }
            return before - records.count
        }
    }

    /// The number of records.
    public func count() -> Int { records.withLock { $0.count } }
}
