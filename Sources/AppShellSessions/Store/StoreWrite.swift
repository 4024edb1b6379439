/// One change a request makes to the store: what `SessionRegistry` hands a backend, alone or —
/// with a `StoreWriter` — together with the changes of other requests in one transaction.
package enum StoreWrite: Sendable, Equatable {
    /// Inserts or replaces the record of the id (`DefaultsBackend.save`).
    case save(SessionID, SessionRecord)
    /// Sets the `accessed` time of the id's record (`DefaultsBackend.touch`).
    case touch(SessionID, accessed: Int64)
    /// Moves the record of the first id to the second (`DefaultsBackend.rename(_:to:)`).
    case rename(SessionID, to: SessionID)
    /// Moves the record of the first id to the second with a new content
    /// (`DefaultsBackend.rename(_:to:replacingWith:)`).
    case renameReplacing(SessionID, to: SessionID, SessionRecord)
    /// Deletes the record of the id (`DefaultsBackend.remove`): an expired session's.
    case remove(SessionID)
    /// Deletes every expired record (`DefaultsBackend.removeExpired`): the sweeper's.
    case removeExpired(accessedBefore: Int64, createdBefore: Int64)
}

extension DefaultsBackend {
    /// Makes one write with the backend's single-record methods.
    package func apply(_ write: StoreWrite) throws(StoreError) {
        switch write {
        case .save(let id, let record): try save(id, record)
        case .touch(let id, let accessed): try touch(id, accessed: accessed)
        case .rename(let id, let newID): try rename(id, to: newID)
        case .renameReplacing(let id, let newID, let record): try rename(id, to: newID, replacingWith: record)
        case .remove(let id): try remove(id)
        case .removeExpired(let accessedBefore, let createdBefore):
            _ = try removeExpired(accessedBefore: accessedBefore, createdBefore: createdBefore)
        }
    }
}

extension StoreWrite {
    /// The write of a user's store the write carries (`SessionRecord.userWrite`), if any.
    package var userWrite: UserWrite? {
        switch self {
        case .save(_, let record), .renameReplacing(_, _, let record): record.userWrite
        case .touch, .rename, .remove, .removeExpired: nil
        }
    }
}
