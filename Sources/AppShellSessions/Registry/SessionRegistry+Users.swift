import AppShellConcurrency

/// Ending every session of a user: log out everywhere, a password change (the other sessions),
/// an account removed.
extension SessionRegistry {
    /// Ends every session logged in as `user` but `kept` (`nil`: every one): in memory here (each
    /// is retired, as after a rotation: a request with its id is answered as a visitor's, and its
    /// next one starts a new session) and in the store (`DefaultsBackend.removeSessions`). A
    /// session whose commit is under way is removed from the store once that commit is done, so
    /// that the commit does not bring its record back. Returns the ids ended in memory (their
    /// event streams are the caller's to end).
    ///
    /// Blocks while commits finish and the store is written: call it off the server's threads (an
    /// action's awaited work).
    package func endSessions(ofUser user: String, except kept: SessionID?) throws(StoreError) -> Set<SessionID> {
        let now = clock()
        var ended: Set<SessionID> = []
        let pending = Locked(0)
        let finished = Condition()
        for shard in shards {
            for session in shard.heldSessions() {
                let id = session.state.withLock { state -> SessionID? in
                    guard !state.retired, state.user == user, state.id != kept else { return nil }
                    state.retired = true
                    state.attachment = nil
                    if state.committing {
                        pending.withLock { $0 += 1 }
                        state.waiters.append {
                            finished.lock()
                            pending.withLock { $0 -= 1 }
                            finished.broadcast()
                            finished.unlock()
                        }
                    }
                    return state.id
                }
                guard let id else { continue }
                shard.retire(id, now: now)
                ended.insert(id)
            }
        }
        finished.lock()
        while pending.withLock({ $0 }) > 0 { finished.wait() }
        finished.unlock()
        _ = try backend.removeSessions(of: user, except: kept)
        userStores.forget(user)
        return ended
    }
}
