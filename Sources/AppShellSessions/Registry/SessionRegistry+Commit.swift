import AppShellConcurrency

/// DESIGN: how a request's changes reach the store.
///
/// A request's body runs under its session's lock; what it changed becomes at most one write
/// (`plan`). Without a store writer the write is made there and then, and the session in memory
/// adopts the changes (`adopt`) once the backend took them. With one, the write is queued for the
/// writer, which commits it with those of other requests in one transaction, and the session is
/// `committing` meanwhile: it adopts the changes, and runs the work registered for after the
/// commit, only when the write is durable; when the batch fails it adopts nothing, drops its live
/// object (half-changed) and runs the rollback work, so it is as it was last durable. Every
/// request of a committing session waits (its body does not run: `Entry.busy`) until the commit
/// is done, so no request is ever answered with state that is not durable, nor builds on changes
/// that may yet fail; requests of other sessions go on meanwhile. The request itself is answered
/// when its commit is done (the server defers its answer): a response still means committed.
extension SessionRegistry {
    /// What a request's changes come to: the write to make, if any, and how memory follows.
    struct CommitPlan: Sendable {
        var write: StoreWrite?
        var rotated: Bool
        var saves: Bool
        var touches: Bool
        var snapshotChanged: Bool
        var values: [String: DefaultsValue]
        var accessed: Int64
        /// In a shared store: the stored record's version once the write is made.
        var version: Int64?
        /// The account the session is logged in as once the write is made.
        var user: String?
        /// The user's store the write makes with the session's, if the request changed it.
        var userWrite: UserWrite?
    }

    /// Commits what the body left in `context` — the writes, then memory — now, or hands the
    /// write to the store writer (then the session is `committing` until it is durable). When the
    /// write is refused the session in memory is unchanged and the error is thrown.
    func commit(
        _ context: SessionContext, in session: Session, _ state: inout Session.State, now: Int64, accessed: Int64,
        isNew: Bool
    ) throws -> Entry {
        var planned = plan(context, state, created: session.created, accessed: accessed)
        if planned.touches, let write = planned.write {
            // Only the stored access time is due: a read neither waits for it nor fails because it
            // cannot be written (a full disk). It stays due, and the next request tries again.
            touch(write, session, &state, accessed: accessed)
            planned.touches = false
            planned.write = nil
        }
        let plan = planned
        guard let writer, let write = plan.write else {
            do {
                if let write = plan.write { try backend.apply(write) }
            } catch {
                state.attachment = nil
                // Another session of the user wrote its store first: read it again.
                if error.isConflict, let user = plan.userWrite?.user { userStores.forget(user) }
                context.rolledBack(conflict: error.isConflict)
                throw error
            }
            adopt(plan, context, session, &state, now: now, isNew: isNew)
            context.committed()
            return .committed(context)
        }
        // A write of a user's store may meet another session's first: the request may run again.
        let pending = PendingCommit(mayConflict: isSharedStore || plan.userWrite != nil)
        state.committing = true
        // In use until the commit is done: neither evicted nor swept meanwhile.
        session.users.add(1, ordering: .relaxed)
        let request = UncheckedContext(context: context)
        let queued = writer.submit(write) { [self] error in
            let context = request.context
            let waiters = session.state.withLock { state in
                if error == nil {
                    // The snapshot it replaces was made on a server thread: let go of there.
                    if let replaced = state.snapshot { ThreadBatch.leave(replaced) }
                    adopt(plan, context, session, &state, now: now, isNew: isNew)
                    context.committed()
                } else {
                    state.attachment = nil
                    // Changed meanwhile through another instance: read it again before its next use.
                    // (Refused while another instance holds the lease: the loader waits it out.)
                    if error?.isConflict == true {
                        state.storedVersion = -1
                        state.leaseUntil = 0
                    }
                    // Another session of the user wrote its store first: read it again.
                    if error?.isConflict == true, let user = plan.userWrite?.user { userStores.forget(user) }
                    context.rolledBack(conflict: error?.isConflict == true)
                }
                state.committing = false
                defer { state.waiters = [] }
                return state.waiters
            }
            session.users.subtract(1, ordering: .relaxed)
            pending.finish(error)
            for waiter in waiters { waiter() }
        }
        guard queued else {
            state.committing = false
            session.users.subtract(1, ordering: .relaxed)
            state.attachment = nil
            context.rolledBack()
            throw StoreError(
                "the store writer's queue is full (\(writer.queueLimit) writes wait)", retryAfterSeconds: 1)
        }
        return .committing(context, pending)
    }

    /// Stores the session's last access: at once without a writer, else queued behind the other
    /// writes without waiting for it. The time counts as stored from now on and is put back when
    /// the write fails, so that a later request tries again.
    private func touch(_ write: StoreWrite, _ session: Session, _ state: inout Session.State, accessed: Int64) {
        let previous = state.storedAccess
        guard let writer else {
            do {
                try backend.apply(write)
                state.storedAccess = accessed
            } catch {
                Logger.appshell.error("session store: the access time was not stored: \(error)")
            }
            return
        }
        state.storedAccess = accessed
        let queued = writer.submit(write) { error in
            guard let error else { return }
            Logger.appshell.error("session store: the access time was not stored: \(error)")
            session.state.withLock { state in
                if state.storedAccess == accessed { state.storedAccess = previous }
            }
        }
        if !queued { state.storedAccess = previous }
    }

    /// The write the changes in `context` need: its new id, its values and snapshot when they are
    /// worth storing, stamped with the session's last access `accessed` — or a touch when that is
    /// due, or nothing.
    func plan(_ context: SessionContext, _ state: Session.State, created: Int64, accessed: Int64) -> CommitPlan {
        let rotated = context.id != state.id
        // Defaults nobody asked for did not change.
        let values = context.defaultsIfMade?.storedValues ?? state.values
        // Logged in or out: the record says who, so that the user's sessions can be found.
        let userChanged = context.user != state.user
        // The user's store, when the request changed it (and it is still the logged-in user's).
        var userWrite: UserWrite?
        if let loaded = context.userStoreIfMade, loaded.store.hasChanges, loaded.user == context.user {
            userWrite = UserWrite(user: loaded.user, values: loaded.store.storedValues, expectedVersion: loaded.version)
        }
        // Compared without making bytes: a snapshot the app made anew is a change.
        let snapshotChanged = !SessionSnapshot.same(context.keptSnapshot, state.snapshot)
        // In a store shared by several instances a session is stored once it holds anything (a
        // snapshot, a live app): the next request may come to another instance, which knows only
        // what is stored. One that holds nothing never comes here (its cookie keeps it).
        let shared = isSharedStore
        let worthStoring = state.persisted || !values.isEmpty || context.storesWithoutValues || shared
        let touchDue = state.persisted && accessed - state.storedAccess >= configuration.touchIntervalSeconds
        // A rotation that is due a touch too saves the record under the new id: one write, not two.
        let saves =
            context.defaultsIfMade?.hasChanges ?? false || (snapshotChanged && worthStoring) || (rotated && touchDue)
            || (shared && !state.persisted) || userChanged || userWrite != nil
        let touches = !saves && !rotated && touchDue
        var write: StoreWrite?
        if saves {
            var record = SessionRecord(
                values: values, created: created, accessed: accessed, kept: context.keptSnapshot)
            // A persisted session's values in memory are those last committed: unchanged, they
            // need not be encoded and written again (an action changes only the snapshot).
            record.valuesAsStored =
                state.persisted && !rotated && !userChanged && !(context.defaultsIfMade?.hasChanges ?? false)
            // Every write of the record says who the session is logged in as: a save replaces it all.
            record.user = context.user
            record.userWrite = userWrite
            if isSharedStore {
                // Written only over the version this request saw (none: a new session's).
                record.expectedVersion = state.persisted ? state.storedVersion : 0
            }
            write =
                rotated && state.persisted
                ? .renameReplacing(state.id, to: context.id, record) : .save(context.id, record)
        } else if rotated && state.persisted {
            write = .rename(state.id, to: context.id)
        } else if touches {
            write = .touch(state.id, accessed: accessed)
        }
        var version: Int64?
        if saves, isSharedStore { version = (state.persisted ? state.storedVersion : 0) + 1 }
        return CommitPlan(
            write: write, rotated: rotated, saves: saves, touches: touches, snapshotChanged: snapshotChanged,
            values: values, accessed: accessed, version: version, user: context.user, userWrite: userWrite)
    }

    /// The backend has the write: the session in memory adopts the context's attachment, memo, id,
    /// values and snapshot (a new session enters the registry).
    func adopt(
        _ plan: CommitPlan, _ context: SessionContext, _ session: Session, _ state: inout Session.State, now: Int64,
        isNew: Bool
    ) {
        state.attachment = context.attachment
        state.memo = context.memo
        if plan.rotated {
            retire(state.id, movingTo: context.id, session, now: now)
            state.id = context.id
        }
        if plan.saves {
            state.values = plan.values
            state.user = plan.user
            if let write = plan.userWrite {
                userStores.remember(
                    UserRecord(values: write.values, version: write.expectedVersion + 1), of: write.user)
            }
            state.snapshot = context.keptSnapshot
            state.persisted = true
            state.storedAccess = plan.accessed
            if let version = plan.version { state.storedVersion = version }
        } else if plan.snapshotChanged {
            // Not worth a write yet (no values): kept in memory until the session holds some.
            state.snapshot = context.keptSnapshot
        } else if plan.touches {
            state.storedAccess = plan.accessed
        }
        // Lock order: a session's lock, then a shard's.
        if isNew { shard(for: context.id).insert(session, id: context.id, capacity: shardCapacity) }
    }
}

/// A request's context handed to the writer's thread: only that thread touches it until the
/// commit is done, and the request's own thread no longer does.
private struct UncheckedContext: @unchecked Sendable {
    let context: SessionContext
}

/// A flag one thread waits for and another raises (a session no longer committing).
final class Signal: Sendable {
    private let raised = Locked(false)
    private let condition = Condition()

    /// Sets the flag and wakes the waiter.
    func raise() {
        condition.lock()
        raised.withLock { $0 = true }
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until the flag is set, then clears it.
    func wait() {
        condition.lock()
        while !raised.withLock({ $0 }) { condition.wait() }
        raised.withLock { $0 = false }
        condition.unlock()
    }
}

/// A session a request cannot enter yet, as `SessionRegistry.enter` found it: its changes are
/// being committed, or it is not in memory and is being loaded.
package struct BusySession: Sendable {
    private enum Wait: Sendable {
        case committing(Session)
        case loading(SessionID, SessionLoader)
    }

    private let wait: Wait

    init(session: Session) { wait = .committing(session) }

    init(loading id: SessionID, on loader: SessionLoader) { wait = .loading(id, loader) }

    /// Calls `work` once the session is free — at once, on this thread, when it is already, else
    /// on the store writer's thread (a commit) or the session loader's (a load): enter the session
    /// again then, after what `work` is given (`SessionRegistry.enter(presented:after:_:)`).
    package func whenFree(_ work: @escaping @Sendable (LoadedSession?) -> Void) {
        switch wait {
        case .committing(let session):
            let now = session.state.withLock { state -> Bool in
                guard state.committing else { return true }
                state.waiters.append { work(nil) }
                return false
            }
            if now { work(nil) }
        case .loading(let id, let loader):
            loader.load(id, then: work)
        }
    }
}
