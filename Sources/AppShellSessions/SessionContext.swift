/// What a handler gets for its session during one request: the defaults store and id rotation.
///
/// It is only valid inside the closure that received it; the session's lock is held meanwhile,
/// so the requests of one session run one after another. Changes (values and a new id) reach the
/// store when the closure returns, before the response is sent, and only then does the session in
/// memory take them; if the closure throws or the store refuses them, none do (see `afterCommit`).
/// With a store writer (group commit) they reach the store a moment later, with other requests'
/// writes; the session's next request waits until then (see `SessionRegistry.commit`).
///
/// One request uses it at a time, under the session's lock, so its stored properties are
/// `@exclusivity(unchecked)`: the run-time checks of theirs were 14 of the 30 a logged-in read made
/// (callgrind, the Performance article). The public ones are computed over private storage: another
/// module accessing a stored property directly checks it whatever its attribute says.
package final class SessionContext {
    /// The session's defaults (made when first asked for: many requests never read them).
    @inlinable
    package var defaults: DefaultsStore { store ?? makeDefaults() }
    /// The stored values as they are now, read without making the defaults store.
    package var storedValues: [String: DefaultsValue] { store?.storedValues ?? values }
    /// The defaults store, if a handler asked for it.
    var defaultsIfMade: DefaultsStore? { store }
    @exclusivity(unchecked) @usableFromInline var store: DefaultsStore?
    private let values: [String: DefaultsValue]
    private let registration: RegistrationDomain

    @usableFromInline
    func makeDefaults() -> DefaultsStore {
        let made = DefaultsStore(values: values, registration: registration)
        store = made
        return made
    }
    /// The account the session is logged in as (its stored name), `nil` when it is not: stored
    /// with the session and indexed, so that every session of a user can be found and ended. Set
    /// it on login and clear it on logout (with a new id: `rotateID`).
    package var user: String? {
        get { currentUser }
        set {
            currentUser = newValue
            // Another user's store is not this one's.
            userStore = nil
        }
    }
    @exclusivity(unchecked) private var currentUser: String?
    /// The user the session was logged in as when the request began.
    let originalUser: String?

    /// The logged-in user's store (`user`'s): the values every session of the user shares, with
    /// the `UserDefaults` API, as `defaults` is the session's. `nil` when the session is not logged
    /// in. Read when first asked for; what a request sets in it is committed with the request's
    /// other changes, all or nothing, over the version it read: when another session of the user
    /// changed it meanwhile, nothing is committed and the request runs again on what is stored.
    /// When it cannot be read the request fails (503) with nothing changed.
    package var userDefaults: DefaultsStore? {
        if let userStore { return userStore.store }
        guard let user = currentUser else { return nil }
        let record: UserRecord
        do throws(StoreError) {
            record = try readUserStore(user)
        } catch {
            userStoreFailure = error
            record = UserRecord()
        }
        let made = LoadedUserStore(
            user: user, version: record.version,
            store: DefaultsStore(values: record.values, registration: RegistrationDomain()))
        userStore = made
        return made.store
    }
    /// The version of the logged-in user's store (read as `userDefaults` is), `nil` when the
    /// session is not logged in: what an answer kept for the next request is checked against.
    package var userStoreVersion: Int64? {
        guard currentUser != nil else { return nil }
        _ = userDefaults
        return userStore?.version
    }

    /// The user's store, if a handler asked for it.
    package var userDefaultsIfMade: DefaultsStore? { userStore?.store }
    /// Drops what this request set in the user's store: it reads as stored again, and nothing of
    /// it is written.
    package func discardUserStoreChanges() { userStore = nil }

    /// The user's store, if a handler asked for it, with the version it was read at.
    var userStoreIfMade: LoadedUserStore? { userStore }
    @exclusivity(unchecked) private var userStore: LoadedUserStore?
    /// Why the user's store could not be read, if it could not: the request fails with it.
    @exclusivity(unchecked) var userStoreFailure: StoreError?
    /// Reads a user's store (the registry's: from its cache or the backend).
    private let readUserStore: (String) throws(StoreError) -> UserRecord

    /// Whether the session was created for this request (the client had no valid cookie).
    package let isNew: Bool
    /// The session's id; changed by `rotateID()`.
    package var id: SessionID { currentID }
    @exclusivity(unchecked) private var currentID: SessionID
    /// What the app keeps beside the defaults, stored with them: set it to keep something across
    /// restarts (the app shell keeps its controller tree here). It is written when it changed and
    /// the session is worth storing (it holds values or is already stored). These are
    /// `keptSnapshot`'s bytes (made when it was made from a value).
    package var snapshot: [UInt8]? {
        get { storedSnapshot?.bytes }
        set { storedSnapshot = newValue.map(SessionSnapshot.init(bytes:)) }
    }
    /// Whether this request's changes are stored even though the session holds no values: the
    /// app asked to keep something only its snapshot holds (a launch waiting for the start-up
    /// work). A session with no values is otherwise kept in memory only, so that requests without
    /// a cookie write nothing.
    package var storesWithoutValues = false
    /// The snapshot as the app keeps it: set one made from a value
    /// (`SessionSnapshot(serializing:)`) and its bytes are made only when a backend writes them
    /// to a file or the app is rebuilt from them.
    package var keptSnapshot: SessionSnapshot? {
        get { storedSnapshot }
        set { storedSnapshot = newValue }
    }
    @exclusivity(unchecked) private var storedSnapshot: SessionSnapshot?
    /// An object kept with the live session in memory for the next request, never stored: it is
    /// gone after a restart or when the session leaves memory (rebuild it from `snapshot`).
    package var attachment: AnyObject? {
        get { storedAttachment }
        set { storedAttachment = newValue }
    }
    @exclusivity(unchecked) private var storedAttachment: AnyObject?
    /// A number kept with the session in memory for the next request, never stored. Unlike an
    /// attachment it keeps a session that holds nothing else as cheap as a map entry: the app
    /// shell notes here when a new session's first state was shown.
    package var memo: Int64? {
        get { storedMemo }
        set { storedMemo = newValue }
    }
    @exclusivity(unchecked) private var storedMemo: Int64?
    /// The id the request arrived with (for a new session, its first id).
    package let originalID: SessionID
    /// Whether the backend holds a record of the session (it once held values).
    package let isStored: Bool
    /// Whether the request presented an id that a rotation (a login, a logout) retired moments
    /// ago — it waited for the session's lock while the rotation ran, or was sent before its
    /// client had the new id. Such a request has no session: nothing it does is kept, no work
    /// registered for after the commit runs, and no cookie is sent (one would overwrite the new
    /// id in the browser). Answer it without acting: refuse actions, show what a visitor sees.
    package let isRetired: Bool

    init(
        id: SessionID, isNew: Bool, isStored: Bool, values: [String: DefaultsValue], registration: RegistrationDomain,
        snapshot: SessionSnapshot?, attachment: AnyObject?, memo: Int64?, isRetired: Bool = false,
        user: String? = nil, readUserStore: @escaping (String) throws(StoreError) -> UserRecord = { _ in UserRecord() }
    ) {
        self.currentUser = user
        self.originalUser = user
        self.readUserStore = readUserStore
        self.currentID = id
        self.originalID = id
        self.isNew = isNew
        self.isStored = isStored
        self.isRetired = isRetired
        self.values = values
        self.registration = registration
        self.storedSnapshot = snapshot
        self.storedAttachment = attachment
        self.storedMemo = memo
    }

    /// Whether the client must be sent the id: the session is new or its id changed (never for a
    /// retired id's request).
    package var needsCookie: Bool { (isNew || id != originalID) && !isRetired }

    /// In a store shared by several instances, for a new session that holds nothing (and so is
    /// not stored): its seal, which its cookie carries after the id (`SessionSeal`).
    package internal(set) var cookieSeal: String?

    /// What the session's cookie carries: the id's text, then `.` and the seal when it has one.
    package var cookieValue: String { cookieSeal.map { id.text + "." + $0 } ?? id.text }

    /// The id and the seal a cookie's `value` carries (`cookieValue`); `nil` for another text.
    package static func parseCookie(_ value: some StringProtocol) -> (id: SessionID, seal: Substring?)? {
        let text = Substring(value)
        guard text.utf8.count > SessionID.textLength else { return SessionID(text).map { ($0, nil) } }
        let end = text.utf8.index(text.utf8.startIndex, offsetBy: SessionID.textLength)
        guard text.utf8[end] == UInt8(ascii: "."), let id = SessionID(text[..<end]) else { return nil }
        return (id, text[text.utf8.index(after: end)...])
    }

    /// Gives the session a new id, keeping its values; from the end of this request the old id
    /// names nothing. Call it on every change of privilege (login, logout) so that a fixed or
    /// leaked id is worthless.
    package func rotateID() {
        currentID = SessionID.random()
    }

    /// Runs `work` once this request's changes are committed (in the store and adopted in memory),
    /// still under the session's lock, so that what it sends goes out in the order of the commits —
    /// on the request's thread, or with a store writer on the writer's thread once the write is
    /// durable (so `work` must not wait for the session's registry).
    /// It never runs when the commit fails: use it for everything others may see (events,
    /// notifications, subscriptions).
    package func afterCommit(_ work: @escaping () -> Void) { commitWork.append(work) }

    /// Runs `work`, under the session's lock, when this request's changes are discarded: the body
    /// threw or the store refused the write. The session keeps its id, values and snapshot; its
    /// attachment is dropped (it may be half-changed) and rebuilt from the snapshot next time.
    package func afterRollback(_ work: @escaping () -> Void) { rollbackWork.append(work) }

    /// Whether the rollback under way is for a conflict (`StoreError.isConflict`: another instance
    /// wrote the session or the user's store first, or holds its lease): the request runs again
    /// on what is stored, so what it would have sent comes then.
    package private(set) var isConflictRollback = false

    @exclusivity(unchecked) private var commitWork = LaterWork()
    @exclusivity(unchecked) private var rollbackWork = LaterWork()

    /// Runs the work registered for after the commit, once.
    func committed() {
        let work = commitWork
        commitWork = LaterWork()
        rollbackWork = LaterWork()
        work.run()
    }

    /// Drops the registered work unrun (a retired id's request: there was nothing to commit).
    func discarded() {
        commitWork = LaterWork()
        rollbackWork = LaterWork()
    }

    /// Runs the work registered for a rollback, once (`conflict`: `isConflictRollback`).
    func rolledBack(conflict: Bool = false) {
        isConflictRollback = conflict
        let work = rollbackWork
        commitWork = LaterWork()
        rollbackWork = LaterWork()
        work.run()
    }
}

/// Work registered to run later, in the order registered.
///
/// The first item is kept apart from the others: a request registers one item for after its
/// commit and one for a rollback, and an array for each was two allocations and two frees more
/// per action (on the store writer's thread, which runs the work).
private struct LaterWork {
    private var first: (() -> Void)?
    private var others: [() -> Void] = []

    mutating func append(_ work: @escaping () -> Void) {
        if first == nil { first = work } else { others.append(work) }
    }

    func run() {
        first?()
        for item in others { item() }
    }
}

/// A user's store as a request read it: whose, at which version, and its values.
struct LoadedUserStore {
    /// The user's stored name.
    let user: String
    /// The version the values were read at (0: nothing stored).
    let version: Int64
    /// The values, with the `UserDefaults` API.
    let store: DefaultsStore
}
