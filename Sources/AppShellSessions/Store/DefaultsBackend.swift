/// What a backend keeps for one session: its stored defaults and two timestamps.
package struct SessionRecord: Sendable, Equatable {
    /// The stored values (never the registered fallbacks).
    package var values: [String: DefaultsValue]
    /// When the session was created, in Unix seconds (for the absolute timeout).
    package var created: Int64
    /// When the session was last used, in Unix seconds (for the idle timeout); refreshed lazily.
    package var accessed: Int64
    /// What the app keeps beside the defaults (the app shell: its controller tree), opaque here;
    /// its bytes are made only when asked for (a backend that writes a file asks, the memory
    /// backend keeps it as it is).
    package var keptSnapshot: SessionSnapshot?
    /// Whether the store already holds `values` for this record's id with these times (only its
    /// snapshot changed): a backend may then write the snapshot alone, and must write the whole
    /// record when it finds no record with these times. Not part of the record (`==` ignores it).
    package var valuesAsStored = false
    /// In a shared store (`DefaultsBackend.isShared`): the version of the stored record — what
    /// `load` found (1 after its first write, one more after each), 0 when not known. Not part of
    /// the record (`==` ignores it).
    package var version: Int64 = 0
    /// In a shared store: the version this write expects the stored record to have (0: none is
    /// stored), so that a change made meanwhile through another instance is never overwritten —
    /// the write is refused as a conflict instead (`StoreError.isConflict`), and the record gets
    /// `expectedVersion + 1`. `nil`: written whatever is stored. Other stores ignore it.
    package var expectedVersion: Int64?
    /// The account the session is logged in as (its stored, lowercased name), `nil` when none:
    /// stored with the record and indexed, so that every session of a user can be found and
    /// ended (`removeSessions(of:except:)`, `removeAccount(named:)`).
    package var user: String?
    /// A write of a user's store to make with this record's, all or nothing: when the user's
    /// stored version is not the write's expected one, neither is made and the record's write is
    /// refused as a conflict (`StoreError.isConflict`; in a batch, its position in
    /// `applyAllReportingConflicts`). Not part of the record (`==` ignores it, a load has none).
    package var userWrite: UserWrite?

    /// `keptSnapshot`'s bytes (made when it was made from a value).
    package var snapshot: [UInt8]? {
        get { keptSnapshot?.bytes }
        set { keptSnapshot = newValue.map(SessionSnapshot.init(bytes:)) }
    }

    /// A record with the given parts.
    package init(values: [String: DefaultsValue], created: Int64, accessed: Int64, snapshot: [UInt8]? = nil) {
        self.init(
            values: values, created: created, accessed: accessed, kept: snapshot.map(SessionSnapshot.init(bytes:)))
    }

    /// A record with the given parts, its snapshot as the app kept it.
    package init(values: [String: DefaultsValue], created: Int64, accessed: Int64, kept: SessionSnapshot?) {
        self.values = values
        self.created = created
        self.accessed = accessed
        self.keptSnapshot = kept
    }

    /// Records are equal when their parts and their snapshots' bytes are.
    package static func == (left: SessionRecord, right: SessionRecord) -> Bool {
        left.values == right.values && left.created == right.created && left.accessed == right.accessed
            && left.user == right.user
            && (SessionSnapshot.same(left.keptSnapshot, right.keptSnapshot) || left.snapshot == right.snapshot)
    }
}

/// A failure of a backend: the store cannot be opened, read or written.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    /// One line for the operator, naming the store and the cause.
    public let description: String

    /// Set when the store is only busy — the store writer's queue is full — rather than failing:
    /// the client may try again after this many seconds (`Retry-After`).
    public let retryAfterSeconds: Int?

    /// Set when a shared store refused a write because the record changed meanwhile (through
    /// another instance): nothing was written; the session is read again and the request run
    /// again on what is stored.
    public let isConflict: Bool

    /// An error saying `description`; `retryAfterSeconds` when it is only busy; `isConflict` when
    /// the record changed meanwhile.
    public init(_ description: String, retryAfterSeconds: Int? = nil, isConflict: Bool = false) {
        self.description = description
        self.retryAfterSeconds = retryAfterSeconds
        self.isConflict = isConflict
    }
}

/// Where session records live: the handler behind `DefaultsStore` (swift-log's front + handler
/// shape). Only backend authors implement it; the session registry calls it.
///
/// Semantics every backend keeps (checked by the conformance suite each backend runs):
/// - `save` inserts or replaces the whole record (snapshot included) and is durable when it
///   returns: a new process on the same store `load`s exactly what was saved (values of every kind
///   come back as that kind).
/// - `touch` changes only `accessed`, and does nothing for an unknown id.
/// - `rename` moves a record to a new id atomically: afterwards the old id loads `nil`. Renaming
///   an unknown id does nothing; a record already under the new id is replaced.
/// - `rename(_:to:replacingWith:)` does both in one step: afterwards the old id loads `nil` and the
///   new id loads the record given — or, when it throws, both are as they were.
/// - `remove` deletes a record; removing an unknown id does nothing.
/// - `removeExpired` deletes every record with `accessed < accessedBefore` or
///   `created < createdBefore` and returns how many it deleted.
/// - `applyAll` makes every write of the list, in order, all or nothing when the backend has
///   transactions (`isTransactional`): a group commit's batch.
/// - A record's `user` is stored with it and follows it through `rename`; `removeSessions(of:except:)`
///   finds every record of a user, whatever renamed, replaced or removed records before.
/// - A record's `userWrite` is made with the record's write or, on a conflict, neither is; a
///   conflict in a batch refuses that write alone in `applyAllReportingConflicts` (the others
///   hold), and the whole batch in `applyAll`.
/// - Accounts: names are compared exactly (the caller folds them); `insertAccount` never replaces
///   one; `removeAccount` takes the user's store and every session logged in as the user along, in
///   one step.
/// - Every method may be called from many threads at once.
package protocol DefaultsBackend: Sendable {
    /// The record of `id`, or `nil` when there is none.
    func load(_ id: SessionID) throws(StoreError) -> SessionRecord?
    /// Inserts or replaces the record of `id`.
    func save(_ id: SessionID, _ record: SessionRecord) throws(StoreError)
    /// Sets the `accessed` time of `id`'s record, if there is one.
    func touch(_ id: SessionID, accessed: Int64) throws(StoreError)
    /// Moves the record of `id` to `newID`.
    func rename(_ id: SessionID, to newID: SessionID) throws(StoreError)
    /// Moves `id`'s record to `newID` with `record` as its new content, all or nothing (a rotation
    /// that also changes the values: the session must never be left under one id in memory and
    /// another in the store).
    func rename(_ id: SessionID, to newID: SessionID, replacingWith record: SessionRecord) throws(StoreError)
    /// Deletes the record of `id`.
    func remove(_ id: SessionID) throws(StoreError)
    /// Deletes expired records; returns how many.
    func removeExpired(accessedBefore: Int64, createdBefore: Int64) throws(StoreError) -> Int
    /// The number of records.
    func count() throws(StoreError) -> Int
    /// Closes the store for good, once nothing will use it again (the process is stopping):
    /// every later call throws. Backends with nothing to close need not implement it.
    func close()
    /// Makes `writes` in order, in one transaction when the backend has them: afterwards either
    /// all of them hold or (it threw) none does.
    func applyAll(_ writes: [StoreWrite]) throws(StoreError)
    /// Called by the store writer once a batch's requests have their answers: upkeep that must not
    /// delay them (the SQLite store finishes a checkpoint there). Most backends have none.
    func afterBatch()
    /// Whether other processes write the same records (several instances on one Redis): then a
    /// session in memory is checked against the stored version before each request, and writes
    /// carry the version they expect (`SessionRecord.expectedVersion`).
    var isShared: Bool { get }
    /// `applyAll`, reporting the writes a shared store refused as conflicts (their positions in
    /// `writes`) instead of throwing: the others hold. Throws, with none of them made, for any other
    /// failure.
    func applyAllReportingConflicts(_ writes: [StoreWrite]) throws(StoreError) -> Set<Int>
    /// In a shared store: the version of `id`'s record (`SessionRecord.version`), or `nil` when
    /// there is none — what a session in memory is checked against before each request, cheaper
    /// than loading the record.
    func storedVersion(of id: SessionID) throws(StoreError) -> Int64?
    /// `storedVersion` of each of `ids`, and the version of the store of each of `users` (0: none
    /// stored), in their order: in a shared store, one round trip for all (the sessions the loader
    /// checks at once, and the stores of those logged in).
    func storedVersions(
        of ids: [SessionID], userStoresOf users: [String]
    ) throws(StoreError) -> (
        sessions: [Int64?], userStores: [Int64]
    )
    /// The terms on which the store grants a session's lease (`LeaseTerms`), `nil` when it grants
    /// none (a store no other process writes needs none; a Redis Cluster grants none yet).
    var leaseTerms: LeaseTerms? { get }
    /// Answers each of `requests` (the sessions the loader checks at once that ask for a lease or
    /// wait out another's), in their order, in one round trip.
    func checkLeases(_ requests: [LeaseRequest]) throws(StoreError) -> [LeaseAnswer]
    /// The relay channel (`StoreMessageRelay`) on which other instances ask this one to give up
    /// its leases, each message `release` naming what: `nil` when it holds none.
    var leaseChannel: String? { get }
    /// What a request to give a lease up (a message on `leaseChannel`) names, if it is one of
    /// this store's.
    func leaseTarget(requestedBy message: [UInt8]) -> LeaseTarget?
    /// Gives up this instance's leases of `targets`, those it holds, in one round trip: another
    /// instance waits for one of them. The sessions they covered must no longer be trusted before
    /// this is called.
    func releaseLeases(of targets: [LeaseTarget]) throws(StoreError)

    /// The account named `name`, or `nil` when there is none.
    func account(named name: String) throws(StoreError) -> Account?
    /// Adds `account`; returns false, and changes nothing, when its name is taken.
    func insertAccount(_ account: Account) throws(StoreError) -> Bool
    /// Sets the password hash of the account `name`; returns false when there is no such account.
    func setPasswordHash(_ passwordHash: String, ofAccount name: String) throws(StoreError) -> Bool
    /// The names of every account, sorted.
    func accountNames() throws(StoreError) -> [String]
    /// Removes the account `name` with its user's store and every session record logged in as it,
    /// all at once; returns what was removed, or `nil` (nothing removed) when there is no such account.
    func removeAccount(named name: String) throws(StoreError) -> RemovedAccount?
    /// Removes every session record logged in as `user` but `kept`'s (log out everywhere; a
    /// password change ends the other sessions); returns the store keys of those removed.
    func removeSessions(of user: String, except kept: SessionID?) throws(StoreError) -> Set<SessionStoreKey>
    /// The user's store of `user`: empty at version 0 when nothing is stored.
    func userStore(of user: String) throws(StoreError) -> UserRecord
    /// Writes a user's store alone (no session's write with it); returns its new version. Throws a
    /// conflict (`StoreError.isConflict`), writing nothing, when it is not at `write.expectedVersion`.
    func writeUserStore(_ write: UserWrite) throws(StoreError) -> Int64
}

extension DefaultsBackend {
    /// Nothing to close.
    package func close() {}

    /// No upkeep.
    package func afterBatch() {}

    /// Only this process writes the records.
    package var isShared: Bool { false }

    /// `applyAll`: a store that is not shared has no conflicts.
    package func applyAllReportingConflicts(_ writes: [StoreWrite]) throws(StoreError) -> Set<Int> {
        try applyAll(writes)
        return []
    }

    /// The version `load` finds.
    package func storedVersion(of id: SessionID) throws(StoreError) -> Int64? { try load(id)?.version }

    /// No leases.
    package var leaseTerms: LeaseTerms? { nil }

    /// No leases to give up.
    package var leaseChannel: String? { nil }

    /// Nothing.
    package func leaseTarget(requestedBy message: [UInt8]) -> LeaseTarget? { nil }

    /// Nothing to give up.
    package func releaseLeases(of targets: [LeaseTarget]) throws(StoreError) {}

    /// No lease granted: the versions alone (`storedVersions`).
    package func checkLeases(_ requests: [LeaseRequest]) throws(StoreError) -> [LeaseAnswer] {
        try requests.map { request throws(StoreError) in
            let read = try storedVersions(of: [request.id], userStoresOf: request.user.map { [$0] } ?? [])
            return LeaseAnswer(
                version: read.sessions[0], userStoreVersion: read.userStores.first ?? 0, granted: false,
                othersMilliseconds: 0)
        }
    }

    /// `storedVersion` of each, then each user's store's version, one after the other.
    package func storedVersions(
        of ids: [SessionID], userStoresOf users: [String]
    ) throws(StoreError) -> (
        sessions: [Int64?], userStores: [Int64]
    ) {
        var versions: [Int64?] = []
        for id in ids { versions.append(try storedVersion(of: id)) }
        var stores: [Int64] = []
        for user in users { stores.append(try userStore(of: user).version) }
        return (versions, stores)
    }

    /// Makes the writes one after the other: for backends with no transaction (a failure part-way
    /// leaves the earlier ones made).
    package func applyAll(_ writes: [StoreWrite]) throws(StoreError) {
        for write in writes { try apply(write) }
    }

    /// `rename` then `save`, renaming back when the save fails: for backends with no transaction.
    /// If the way back fails too, the record stays under `newID`, which the caller never adopts
    /// (the old id then loads nothing: the user is logged out, never let in).
    package func rename(_ id: SessionID, to newID: SessionID, replacingWith record: SessionRecord) throws(StoreError) {
        try rename(id, to: newID)
        do {
            try save(newID, record)
        } catch {
            try? rename(newID, to: id)
            throw error
        }
    }
}
