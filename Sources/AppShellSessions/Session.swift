import AppShellConcurrency
import Synchronization

/// One live session in memory: its id and values behind its own lock, and the timestamps the
/// registry reads without that lock.
final class Session: Sendable {
    /// When the session was created (Unix seconds).
    let created: Int64
    /// When a request last used it (Unix seconds).
    let lastAccess: Atomic<Int64>
    /// Requests holding the session right now; a session in use is never evicted or swept.
    let users = Atomic<Int>(0)
    /// The values and id, only touched by the request that holds the lock.
    let state: Locked<State>

    /// The part of a session its lock protects.
    struct State {
        /// The current id; it changes on rotation.
        var id: SessionID
        /// The stored values.
        var values: [String: DefaultsValue]
        /// The account the session is logged in as (stored with it), `nil` when none.
        var user: String?
        /// What the app keeps beside the values (stored with them).
        var snapshot: SessionSnapshot?
        /// An object the app keeps with the live session in memory (never stored).
        var attachment: AnyObject?
        /// A number the app keeps with the session in memory (never stored).
        var memo: Int64?
        /// Whether the backend holds a record of the session.
        var persisted: Bool
        /// The `accessed` time the backend holds.
        var storedAccess: Int64
        /// In a shared store: the version of the stored record this state is (0: none stored,
        /// -1: not known, read it again).
        var storedVersion: Int64 = 0
        /// In a shared store: the version of the logged-in user's store the loader read moments
        /// ago, with the session's (`SessionRegistry.acquireAll`): the requests that waited for
        /// that load read the store from memory when that is the version kept there. Cleared by
        /// every other check of the session (`refreshed`), whose work reads the store itself.
        var userStoreCheck: (user: String, version: Int64)?
        /// In a store that grants leases (`LeaseTerms`): until when this instance trusts the
        /// session's lease (monotonic milliseconds; 0: it holds none), and the user it covers
        /// with the session (the store of the user the session was logged in as then).
        var leaseUntil: Int64 = 0
        var leaseUser: String?
        /// Whether the loader asks for the lease at its next check: the last one found the record
        /// as this instance knew it (nobody else wrote it meanwhile), or the lease is held.
        var asksLease = false
        /// When this instance last gave the session's lease up at another's request (monotonic
        /// milliseconds): a grant whose check was sent before then is not trusted (it crossed the
        /// request).
        var leaseReleasedAt: Int64 = 0
        /// How many times in a row the loader waited for another instance's lease of it.
        var leaseWaits = 0
        /// Set when the session left the registry (expired, evicted, or replaced): a request that
        /// still holds it must start over.
        var retired = false
        /// Set while the session's changes wait for the store writer: requests wait until the
        /// commit is done (see `SessionRegistry.commit`).
        var committing = false
        /// What to call when the commit is done: the requests that found the session committing.
        var waiters: [@Sendable () -> Void] = []
    }

    init(
        id: SessionID, values: [String: DefaultsValue], snapshot: SessionSnapshot?, created: Int64, accessed: Int64,
        persisted: Bool, memo: Int64? = nil, user: String? = nil
    ) {
        self.created = created
        self.lastAccess = Atomic(accessed)
        self.state = Locked(
            State(
                id: id, values: values, user: user, snapshot: snapshot, memo: memo, persisted: persisted,
                storedAccess: accessed))
    }

    /// Whether a request may run on what memory holds without a check against the store: the
    /// session's lease is trusted at `now` (monotonic milliseconds) and covers its user's store.
    static func trustsLease(_ state: State, at now: Int64) -> Bool {
        state.leaseUntil > now && state.leaseUser == state.user
    }

    /// Whether the session has expired at `now` under `configuration`.
    func isExpired(at now: Int64, _ configuration: SessionConfiguration) -> Bool {
        now - lastAccess.load(ordering: .relaxed) > configuration.idleTimeoutSeconds
            || now - created > configuration.absoluteTimeoutSeconds
    }
}
