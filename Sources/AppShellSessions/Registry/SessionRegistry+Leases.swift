import AppShellConcurrency
import Glibc
import Synchronization

// A session's lease (`LeaseTerms`) as the registry holds it: trusted, and given up on request.

extension SessionRegistry {
    /// What the store answered a session's `LeaseRequest`: when it granted the lease, the
    /// session's requests are trusted to run on what memory holds until `sent` (when the check
    /// left) + the lease's length − the margin; the store of `request`'s user is checked at the
    /// version found (the lease covers it too).
    func adopt(
        _ answer: LeaseAnswer, of request: LeaseRequest, _ session: Session, _ state: inout Session.State,
        sent: Int64, _ terms: LeaseTerms
    ) {
        state.userStoreCheck = request.user.map { ($0, answer.userStoreVersion) }
        state.leaseUser = request.user
        // A grant that crossed a request to give the lease up (its check sent before this instance
        // gave it up) is held in the store and not trusted here: the next request gives it up.
        let trusted = answer.granted && state.leaseReleasedAt < sent
        state.leaseUntil = trusted ? sent + Int64(terms.length - terms.margin) : 0
        state.leaseWaits = 0
        if answer.granted {
            leases.insert(session, as: state.id.storeKey)
            leasesGranted.add(1, ordering: .relaxed)
        }
    }

    /// How long the loader puts off a session whose lease another instance holds for
    /// `left` milliseconds more, at its `waits`-th wait: the holder was asked to give it up and
    /// usually has within a few milliseconds, so the check is made again soon, then less and less
    /// often, and never later than the lease's end.
    static func leaseWait(left: Int, waits: Int) -> Int { min(left, 2 << min(waits, 8)) }

    /// Whether this instance trusts the lease of the session `id` names now (its requests are
    /// answered from memory, with no check against the store), for tests and diagnostics: it
    /// neither loads nor touches the session.
    package func holdsLease(_ id: SessionID) -> Bool {
        shard(for: id).heldSession(id)?.state.withLock { Session.trustsLease($0, at: TimerQueue.monotonicClock()) }
            ?? false
    }

    /// Blocks until no other instance holds the lease of the session `id` names, asking the holder
    /// to give it up as the loader does: for the blocking paths (`withLiveSession`), whose
    /// conflicts do not go through the loader. Returns at once in a store with no leases.
    func waitOutLeaseElsewhere(of id: SessionID) {
        guard backend.leaseTerms != nil else { return }
        let user = shard(for: id).heldSession(id)?.state.withLock { $0.user }
        for waits in 0..<32 {
            guard let answer = try? backend.checkLeases([LeaseRequest(id: id, user: user, asks: false)]).first,
                answer.othersMilliseconds > 0
            else { return }
            usleep(UInt32(Self.leaseWait(left: answer.othersMilliseconds, waits: waits)) * 1_000)
        }
    }

    /// Another instance waits for a lease this one holds (`message`, received on the store's
    /// `leaseChannel`): the sessions it covers stop trusting it — a request that trusted it has
    /// run by the time its session's lock is taken here — and then the store is told. Called on
    /// the relay's thread.
    package func releaseLease(requestedBy message: [UInt8]) {
        guard let target = backend.leaseTarget(requestedBy: message) else { return }
        let covered = leases.remove(target)
        // None here was granted it (the session left memory, or its grant is on its way back
        // here, to be trusted once it comes): the store's lease is left to end.
        guard !covered.isEmpty else { return }
        let now = TimerQueue.monotonicClock()
        var targets = [target]
        for session in covered {
            let key = session.state.withLock { state in
                state.leaseUntil = 0
                state.leaseReleasedAt = now
                return state.id.storeKey
            }
            // A user's store's lease came with its sessions': they are given up too.
            if target != .session(key) { targets.append(.session(key)) }
        }
        leasesReleased.add(1, ordering: .relaxed)
        try? backend.releaseLeases(of: targets)
    }
}

/// The sessions in memory whose lease this instance was granted, by store key: those a request
/// to give a lease up names. Held weakly (a session that left memory goes with it); the entries
/// whose lease ended are purged each time the index doubled.
final class LeaseIndex: Sendable {
    private struct Entry {
        weak var session: Session?
    }

    private struct Entries {
        var sessions: [SessionStoreKey: Entry] = [:]
        var purgeAt = 1_024
    }

    private let entries = Locked(Entries())

    /// `session` holds its lease under `key` now.
    func insert(_ session: Session, as key: SessionStoreKey) {
        entries.withLock { entries in
            entries.sessions[key] = Entry(session: session)
            guard entries.sessions.count >= entries.purgeAt else { return }
            let now = TimerQueue.monotonicClock()
            entries.sessions = entries.sessions.filter {
                $0.value.session?.state.withLock { $0.leaseUntil > now } ?? false
            }
            entries.purgeAt = max(1_024, 2 * entries.sessions.count)
        }
    }

    /// Takes out, and returns, the sessions in memory whose lease covers `target`.
    func remove(_ target: LeaseTarget) -> [Session] {
        entries.withLock { entries in
            let covered: [SessionStoreKey]
            switch target {
            case .session(let key):
                // Rotated since it was granted (the lease moved with the record): under its new id.
                covered =
                    entries.sessions[key] != nil
                    ? [key]
                    : entries.sessions.filter { $0.value.session?.state.withLock { $0.id.storeKey == key } ?? false }
                        .map(\.key)
            case .userStore(let user):
                covered = entries.sessions.filter { $0.value.session?.state.withLock { $0.leaseUser == user } ?? false }
                    .map(\.key)
            }
            return covered.compactMap { entries.sessions.removeValue(forKey: $0)?.session }
        }
    }
}
